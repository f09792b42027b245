//! The plan graph drawn as a graph: a box per stage in layers from the start down, the
//! always-taken edges as solid lines and the router's choices as dashed ones, routed at right
//! angles (edges back up the graph run in lanes on the right). Built from plain widgets pinned
//! in a stack, so the labels are text the tests (and screen readers) find.

use iced::widget::{Space, container, pin, stack, text};
use iced::{Background, Border, Color, Element, Length, Theme};

use super::theme;
use crate::session::plan_graph::PlanGraph;

const NODE_W: f32 = 128.0;
const NODE_H: f32 = 24.0;
const SLOT_GAP: f32 = 14.0;
const LAYER_GAP: f32 = 36.0;
const MARGIN: f32 = 8.0;
const LANE_GAP: f32 = 6.0;
const LINE: f32 = 1.5;
const DASH: f32 = 4.0;
const SOLID: Color = Color::from_rgb(0.62, 0.66, 0.74);
const DASHED: Color = Color::from_rgb(0.45, 0.60, 0.90);

/// Where a node's box sits.
#[derive(Debug, Clone, Copy)]
struct Place {
    x: f32,
    y: f32,
}

/// The graph's width and height in logical pixels.
pub fn size(graph: &PlanGraph) -> (f32, f32) {
    let widest = graph.layers.iter().copied().max().unwrap_or(1) as f32;
    let lanes = back_edges(graph).count() as f32;
    let width = MARGIN * 2.0 + widest * NODE_W + (widest - 1.0).max(0.0) * SLOT_GAP + 10.0 + lanes * LANE_GAP;
    let height = MARGIN * 2.0 + graph.layers.len() as f32 * (NODE_H + LAYER_GAP) - LAYER_GAP;
    (width, height)
}

fn back_edges(graph: &PlanGraph) -> impl Iterator<Item = &crate::session::plan_graph::Edge> {
    graph
        .edges
        .iter()
        .filter(|e| graph.nodes[e.to].layer <= graph.nodes[e.from].layer)
}

fn places(graph: &PlanGraph) -> Vec<Place> {
    let widest = graph.layers.iter().copied().max().unwrap_or(1) as f32;
    let full = widest * NODE_W + (widest - 1.0).max(0.0) * SLOT_GAP;
    graph
        .nodes
        .iter()
        .map(|node| {
            let count = graph.layers[node.layer] as f32;
            let row = count * NODE_W + (count - 1.0).max(0.0) * SLOT_GAP;
            Place {
                x: MARGIN + (full - row) / 2.0 + node.slot as f32 * (NODE_W + SLOT_GAP),
                y: MARGIN + node.layer as f32 * (NODE_H + LAYER_GAP),
            }
        })
        .collect()
}

/// The graph.
pub fn view<'a, Message: 'a>(graph: &PlanGraph) -> Element<'a, Message> {
    let (width, height) = size(graph);
    let places = places(graph);
    let mut layers: Vec<Element<'a, Message>> = vec![Space::new().width(width).height(height).into()];
    // Spread the ends of the edges that share a node, so they stay apart.
    let mut out_count = vec![0usize; graph.nodes.len()];
    let mut in_count = vec![0usize; graph.nodes.len()];
    for e in &graph.edges {
        out_count[e.from] += 1;
        in_count[e.to] += 1;
    }
    let (mut out_seen, mut in_seen) = (vec![0usize; graph.nodes.len()], vec![0usize; graph.nodes.len()]);
    let spread = |k: usize, n: usize| (k as f32 - (n as f32 - 1.0) / 2.0) * (NODE_W / (n as f32 + 1.0)).min(10.0);
    let right = width - 10.0 - back_edges(graph).count() as f32 * LANE_GAP;
    let mut lane = 0usize;
    for e in &graph.edges {
        let (a, b) = (places[e.from], places[e.to]);
        let (ko, ki) = (out_seen[e.from], in_seen[e.to]);
        out_seen[e.from] += 1;
        in_seen[e.to] += 1;
        let color = if e.conditional { DASHED } else { SOLID };
        let forward = graph.nodes[e.to].layer > graph.nodes[e.from].layer;
        if forward {
            let x1 = a.x + NODE_W / 2.0 + spread(ko, out_count[e.from]);
            let x2 = b.x + NODE_W / 2.0 + spread(ki, in_count[e.to]);
            let y1 = a.y + NODE_H;
            let channel = y1 + LAYER_GAP / 2.0 + (ko as f32 - out_count[e.from] as f32 / 2.0) * 2.0;
            let y2 = b.y;
            segment(&mut layers, x1, y1, x1, channel, color, e.conditional);
            segment(&mut layers, x1, channel, x2, channel, color, e.conditional);
            segment(&mut layers, x2, channel, x2, y2 - 4.0, color, e.conditional);
            layers.push(arrow_down(x2, y2 - 5.0, color));
        } else {
            let x = right + 4.0 + lane as f32 * LANE_GAP;
            lane += 1;
            let y1 = a.y + NODE_H / 2.0 + spread(ko, out_count[e.from]) / 2.0;
            let y2 = b.y + NODE_H / 2.0 + spread(ki, in_count[e.to]) / 2.0;
            let (ax, bx) = (a.x + NODE_W, b.x + NODE_W);
            segment(&mut layers, ax, y1, x, y1, color, e.conditional);
            segment(&mut layers, x, y1, x, y2, color, e.conditional);
            segment(&mut layers, bx + 4.0, y2, x, y2, color, e.conditional);
            layers.push(arrow_left(bx, y2, color));
        }
    }
    for (node, place) in graph.nodes.iter().zip(&places) {
        let terminal = node.id.starts_with("__");
        layers.push(
            pin(container(text(node.label.clone()).size(11))
                .center_x(NODE_W)
                .center_y(NODE_H)
                .style(move |_theme: &Theme| node_style(terminal)))
            .x(place.x)
            .y(place.y)
            .into(),
        );
    }
    stack(layers).width(width).height(height).into()
}

fn node_style(terminal: bool) -> container::Style {
    container::Style {
        background: Some(Background::Color(if terminal {
            Color::from_rgb(0.22, 0.20, 0.36)
        } else {
            Color::from_rgb(0.17, 0.18, 0.21)
        })),
        text_color: Some(Color::from_rgb(0.88, 0.89, 0.92)),
        border: Border {
            color: if terminal {
                theme::ACTIVE
            } else {
                Color::from_rgb(0.36, 0.38, 0.45)
            },
            width: 1.0,
            radius: if terminal { 12.0 } else { 4.0 }.into(),
        },
        ..container::Style::default()
    }
}

/// A horizontal or vertical line from (x1, y1) to (x2, y2), dashed for a conditional edge.
fn segment<'a, Message: 'a>(
    layers: &mut Vec<Element<'a, Message>>,
    x1: f32,
    y1: f32,
    x2: f32,
    y2: f32,
    color: Color,
    dashed: bool,
) {
    let (x, y) = (x1.min(x2), y1.min(y2));
    let horizontal = (y1 - y2).abs() < f32::EPSILON;
    let length = if horizontal { (x1 - x2).abs() } else { (y1 - y2).abs() };
    if length < 0.5 {
        return;
    }
    let step = if dashed { DASH * 2.0 } else { length };
    let piece = if dashed { DASH } else { length };
    let mut at = 0.0;
    while at < length {
        let len = piece.min(length - at);
        let (px, py, w, h) = if horizontal {
            (x + at, y - LINE / 2.0, len, LINE)
        } else {
            (x - LINE / 2.0, y + at, LINE, len)
        };
        layers.push(bar(px, py, w, h, color));
        at += step;
    }
}

fn bar<'a, Message: 'a>(x: f32, y: f32, w: f32, h: f32, color: Color) -> Element<'a, Message> {
    pin(
        container(Space::new().width(Length::Fixed(w)).height(Length::Fixed(h))).style(move |_theme: &Theme| {
            container::Style {
                background: Some(Background::Color(color)),
                ..container::Style::default()
            }
        }),
    )
    .x(x)
    .y(y)
    .into()
}

/// An arrowhead pointing down, its tip at (x, y + 5).
fn arrow_down<'a, Message: 'a>(x: f32, y: f32, color: Color) -> Element<'a, Message> {
    let mut col = iced::widget::column![].align_x(iced::Center);
    for w in [7.0, 5.0, 3.0, 1.5] {
        col = col.push(
            container(Space::new().width(Length::Fixed(w)).height(Length::Fixed(1.5))).style(move |_theme: &Theme| {
                container::Style {
                    background: Some(Background::Color(color)),
                    ..container::Style::default()
                }
            }),
        );
    }
    pin(col.width(Length::Fixed(7.0))).x(x - 3.5).y(y).into()
}

/// An arrowhead pointing left, its tip at (x, y).
fn arrow_left<'a, Message: 'a>(x: f32, y: f32, color: Color) -> Element<'a, Message> {
    let mut row = iced::widget::row![].align_y(iced::Center);
    for h in [1.5, 3.0, 5.0, 7.0] {
        row = row.push(
            container(Space::new().width(Length::Fixed(1.5)).height(Length::Fixed(h))).style(move |_theme: &Theme| {
                container::Style {
                    background: Some(Background::Color(color)),
                    ..container::Style::default()
                }
            }),
        );
    }
    pin(row.height(Length::Fixed(7.0))).x(x).y(y - 3.5).into()
}
