//! The plan graph drawn as a graph: a box per stage in layers from the start down, the
//! always-taken edges as solid lines and the router's choices as dashed ones, routed at right
//! angles (edges back up the graph run in lanes on the right); a labelled choice is coloured by
//! what leads along it (success green, failure red, retry blue, a limit grey). Built from plain widgets pinned
//! in a stack, so the labels are text the tests (and screen readers) find.

use iced::widget::{Space, container, pin, stack, text};
use iced::{Background, Border, Color, Element, Length, Point, Rectangle, Size, Theme};

use super::theme;
use crate::session::plan_graph::{Edge, PlanGraph};

const NODE_W: f32 = 128.0;
const NODE_H: f32 = 24.0;
const SLOT_GAP: f32 = 14.0;
/// The least gap between two layers.
const LAYER_GAP: f32 = 36.0;
const MARGIN: f32 = 8.0;
/// Between two lanes on the right.
const LANE_GAP: f32 = 10.0;
/// Between two tracks (horizontal runs) in a gap between layers.
const TRACK_GAP: f32 = 6.0;
/// Above the first track and below the last one in a gap (room for the arrowheads).
const GAP_PAD: f32 = 10.0;
/// Between two edge ends on a node's bottom (and, shifted by half, on its top).
const END_GAP: f32 = 12.0;
/// Between two edge ends on a node's right side.
const SIDE_GAP: f32 = 6.0;
const LINE: f32 = 1.5;
const DASH: f32 = 4.0;
const SOLID: Color = Color::from_rgb(0.62, 0.66, 0.74);
const DASHED: Color = Color::from_rgb(0.45, 0.60, 0.90);
const SUCCESS: Color = Color::from_rgb(0.40, 0.75, 0.45);
const FAILURE: Color = Color::from_rgb(0.90, 0.45, 0.40);
const LIMIT: Color = Color::from_rgb(0.55, 0.55, 0.58);

/// The colour of an edge: solid grey when always taken, else by its label's first outcome
/// (`success`, `failure`, `retry`, `limit`; unlabelled choices dashed blue).
pub fn edge_color(conditional: bool, label: Option<&str>) -> Color {
    if !conditional {
        return SOLID;
    }
    match label.map(|l| l.split([' ', ':', '/']).next().unwrap_or("")) {
        Some("success") => SUCCESS,
        Some("failure") => FAILURE,
        Some("limit") => LIMIT,
        _ => DASHED,
    }
}

/// How an edge's arrowhead points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrow {
    /// Into the top of its node.
    Down,
    /// Into the right side of its node (an edge back up the graph).
    Left,
}

/// One edge as drawn: a line at right angles through `points`, and its arrowhead with the tip
/// at `tip`.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub points: Vec<Point>,
    pub tip: Point,
    pub arrow: Arrow,
    pub conditional: bool,
}

/// The graph laid out: each node's box (in `graph.nodes` order), each edge's route (in
/// `graph.edges` order), and the whole size.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawing {
    pub boxes: Vec<Rectangle>,
    pub routes: Vec<Route>,
    pub width: f32,
    pub height: f32,
}

/// Lays out `graph`: boxes in layers, and the edges routed at right angles. An edge to the next
/// layer goes down through the gap between them; one back up the graph runs in a lane on the
/// right; one down past several layers goes straight only where no box of a layer it passes is
/// in its way, else it too takes a lane on the right (drawn straight, it ran under the boxes it
/// passed, and looked as if it came from them).
///
/// Edges never run on top of each other or crowd: every horizontal run in a gap between two
/// layers has a track of its own (`TRACK_GAP` apart; the gap grows with the number of tracks),
/// every lane its own column (`LANE_GAP` apart), the ends on a node's bottom and top sit on two
/// interleaved grids (`END_GAP` apart, so a line leaving a node never runs along one entering the
/// node below), and a node many edges return to is tall enough for their ends on its side to
/// keep `SIDE_GAP` apart.
pub fn lay_out(graph: &PlanGraph) -> Drawing {
    let n = graph.nodes.len();
    let layer_of = |v: usize| graph.nodes[v].layer;
    let forward = |e: &Edge| layer_of(e.to) > layer_of(e.from);
    // How many edge ends each node has on each of its sides.
    let (mut out_count, mut in_count, mut side_count) = (vec![0usize; n], vec![0usize; n], vec![0usize; n]);
    for e in &graph.edges {
        if forward(e) {
            out_count[e.from] += 1;
            in_count[e.to] += 1;
        } else {
            side_count[e.from] += 1;
            side_count[e.to] += 1;
        }
    }
    let heights: Vec<f32> = side_count
        .iter()
        .map(|&k| NODE_H.max(k as f32 * SIDE_GAP + 6.0))
        .collect();
    let xs = columns(graph);
    let widest = graph.layers.iter().copied().max().unwrap_or(1) as f32;
    let right = MARGIN * 2.0 + widest * NODE_W + (widest - 1.0).max(0.0) * SLOT_GAP;
    // Where each edge leaves its node's bottom and enters its target's top.
    let (mut out_seen, mut in_seen) = (vec![0usize; n], vec![0usize; n]);
    let mut ends = Vec::with_capacity(graph.edges.len());
    for e in &graph.edges {
        if forward(e) {
            let (ko, ki) = (out_seen[e.from], in_seen[e.to]);
            out_seen[e.from] += 1;
            in_seen[e.to] += 1;
            ends.push((
                xs[e.from] + NODE_W / 2.0 + grid(ko, out_count[e.from], 0.0),
                xs[e.to] + NODE_W / 2.0 + grid(ki, in_count[e.to], END_GAP / 2.0),
            ));
        } else {
            ends.push((0.0, 0.0));
        }
    }
    // Whether a vertical line at `x` passes the layers strictly between `from` and `to` clear of
    // their boxes (boxes of one layer share their top; their heights only grow downwards).
    let clear = |x: f32, from: usize, to: usize| {
        (0..n)
            .filter(|&v| layer_of(v) > from && layer_of(v) < to)
            .all(|v| x < xs[v] - LINE - END_GAP / 2.0 || x > xs[v] + NODE_W + LINE + END_GAP / 2.0)
    };
    let detour: Vec<bool> = graph
        .edges
        .iter()
        .zip(&ends)
        .map(|(e, &(_, x2))| forward(e) && !clear(x2, layer_of(e.from), layer_of(e.to)))
        .collect();
    // The tracks of each gap: first the channels of the edges leaving the layer above, then the
    // approaches of the detours entering the layer below.
    let depth = graph.layers.len();
    let mut tracks = vec![0usize; depth];
    let mut channel = vec![0usize; graph.edges.len()];
    let mut approach = vec![0usize; graph.edges.len()];
    for (i, e) in graph.edges.iter().enumerate() {
        if forward(e) {
            channel[i] = tracks[layer_of(e.from)];
            tracks[layer_of(e.from)] += 1;
        }
    }
    for (i, e) in graph.edges.iter().enumerate() {
        if detour[i] {
            let gap = layer_of(e.to) - 1;
            approach[i] = tracks[gap];
            tracks[gap] += 1;
        }
    }
    let mut layer_h = vec![NODE_H; depth];
    for v in 0..n {
        layer_h[layer_of(v)] = layer_h[layer_of(v)].max(heights[v]);
    }
    let gap_h: Vec<f32> = tracks
        .iter()
        .map(|&t| LAYER_GAP.max(GAP_PAD * 2.0 + t.saturating_sub(1) as f32 * TRACK_GAP))
        .collect();
    let mut tops = vec![MARGIN; depth];
    for layer in 1..depth {
        tops[layer] = tops[layer - 1] + layer_h[layer - 1] + gap_h[layer - 1];
    }
    let track_y = |layer: usize, track: usize| tops[layer] + layer_h[layer] + GAP_PAD + track as f32 * TRACK_GAP;
    let boxes: Vec<Rectangle> = (0..n)
        .map(|v| Rectangle::new(Point::new(xs[v], tops[layer_of(v)]), Size::new(NODE_W, heights[v])))
        .collect();
    let mut lanes = 0usize;
    let mut lane = || {
        lanes += 1;
        right + 4.0 + (lanes - 1) as f32 * LANE_GAP
    };
    let mut side_seen = vec![0usize; n];
    let mut routes = Vec::with_capacity(graph.edges.len());
    for (i, e) in graph.edges.iter().enumerate() {
        let (a, b) = (boxes[e.from], boxes[e.to]);
        let route = if forward(e) {
            let (x1, x2) = ends[i];
            let (y1, y2) = (a.y + a.height, b.y);
            let run = track_y(layer_of(e.from), channel[i]);
            let points = if detour[i] {
                // Down the lane, then across the gap just above the node.
                let x = lane();
                let above = track_y(layer_of(e.to) - 1, approach[i]);
                vec![
                    Point::new(x1, y1),
                    Point::new(x1, run),
                    Point::new(x, run),
                    Point::new(x, above),
                    Point::new(x2, above),
                    Point::new(x2, y2 - 4.0),
                ]
            } else {
                vec![
                    Point::new(x1, y1),
                    Point::new(x1, run),
                    Point::new(x2, run),
                    Point::new(x2, y2 - 4.0),
                ]
            };
            Route {
                points,
                tip: Point::new(x2, y2),
                arrow: Arrow::Down,
                conditional: e.conditional,
            }
        } else {
            let (ko, ki) = (side_seen[e.from], side_seen[e.to] + usize::from(e.from == e.to));
            side_seen[e.from] += 1;
            side_seen[e.to] += 1;
            let x = lane();
            let y1 = a.y + a.height / 2.0 + side(ko, side_count[e.from]);
            let y2 = b.y + b.height / 2.0 + side(ki, side_count[e.to]);
            let (ax, bx) = (a.x + NODE_W, b.x + NODE_W);
            Route {
                points: vec![
                    Point::new(ax, y1),
                    Point::new(x, y1),
                    Point::new(x, y2),
                    Point::new(bx + 4.0, y2),
                ],
                tip: Point::new(bx, y2),
                arrow: Arrow::Left,
                conditional: e.conditional,
            }
        };
        routes.push(route);
    }
    let width = right + 10.0 + lanes as f32 * LANE_GAP;
    let height = tops[depth - 1] + layer_h[depth - 1] + MARGIN;
    Drawing {
        boxes,
        routes,
        width,
        height,
    }
}

/// The offset of end `k` of `count` from the middle of a node's bottom (or top, with `shift`):
/// on a grid `END_GAP` apart that is the same for every node, shifted by `shift` on the tops, so
/// an end on a node's top never lines up with one on the bottom of the node above it.
fn grid(k: usize, count: usize, shift: f32) -> f32 {
    (k as f32 - (count.saturating_sub(1) / 2) as f32) * END_GAP + shift
}

/// The offset of end `k` of `count` from the middle of a node's right side.
fn side(k: usize, count: usize) -> f32 {
    (k as f32 - (count as f32 - 1.0) / 2.0) * SIDE_GAP
}

/// The graph's width and height in logical pixels.
pub fn size(graph: &PlanGraph) -> (f32, f32) {
    let drawing = lay_out(graph);
    (drawing.width, drawing.height)
}

/// The x of each node's box: each layer centred under the widest.
fn columns(graph: &PlanGraph) -> Vec<f32> {
    let widest = graph.layers.iter().copied().max().unwrap_or(1) as f32;
    let full = widest * NODE_W + (widest - 1.0).max(0.0) * SLOT_GAP;
    graph
        .nodes
        .iter()
        .map(|node| {
            let count = graph.layers[node.layer] as f32;
            let row = count * NODE_W + (count - 1.0).max(0.0) * SLOT_GAP;
            MARGIN + (full - row) / 2.0 + node.slot as f32 * (NODE_W + SLOT_GAP)
        })
        .collect()
}

/// The graph.
pub fn view<'a, Message: 'a>(graph: &PlanGraph) -> Element<'a, Message> {
    let drawing = lay_out(graph);
    let (width, height) = (drawing.width, drawing.height);
    let mut layers: Vec<Element<'a, Message>> = vec![Space::new().width(width).height(height).into()];
    for (route, edge) in drawing.routes.iter().zip(&graph.edges) {
        let color = edge_color(route.conditional, edge.label.as_deref());
        for pair in route.points.windows(2) {
            segment(
                &mut layers,
                pair[0].x,
                pair[0].y,
                pair[1].x,
                pair[1].y,
                color,
                route.conditional,
            );
        }
        layers.push(match route.arrow {
            Arrow::Down => arrow_down(route.tip.x, route.tip.y - 5.0, color),
            Arrow::Left => arrow_left(route.tip.x, route.tip.y, color),
        });
    }
    for (node, place) in graph.nodes.iter().zip(&drawing.boxes) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::plan_graph::parse;

    #[test]
    fn each_labelled_choice_is_coloured_by_what_leads_along_it() {
        let graph = parse(BUG_FIX).expect("a graph");
        let color = |from: &str, to: &str| {
            let e = graph
                .edges
                .iter()
                .find(|e| graph.nodes[e.from].id == from && graph.nodes[e.to].id == to)
                .expect("the edge");
            edge_color(e.conditional, e.label.as_deref())
        };
        assert_eq!(color("fix", "regression_testing"), SUCCESS);
        assert_eq!(color("fix", "abort"), FAILURE);
        assert_eq!(color("fix", "adaptive_retrieval"), DASHED);
        assert_eq!(color("adaptive_retrieval", "fix"), DASHED);
        assert_eq!(color("adaptive_retrieval", "abort"), LIMIT);
        assert_eq!(color("done", "__end__"), SOLID);
    }

    /// What ided's dry run sends for the bug_fix workflow (`ided run --dry-run`).
    const BUG_FIX: &str = "---\nconfig:\n  flowchart:\n    curve: linear\n---\ngraph TD;\n\t__start__([<p>__start__</p>]):::first\n\treproduction(reproduction)\n\tdiagnosis(diagnosis)\n\tfix(fix)\n\tregression_testing(regression_testing)\n\tadaptive_retrieval(adaptive_retrieval)\n\tdone(done)\n\tabort(abort)\n\t__end__([<p>__end__</p>]):::last\n\t__start__ --> reproduction;\n\tadaptive_retrieval -. &nbsp;limit&nbsp; .-> abort;\n\tadaptive_retrieval -. &nbsp;retry: diagnosis&nbsp; .-> diagnosis;\n\tadaptive_retrieval -. &nbsp;retry: fix&nbsp; .-> fix;\n\tadaptive_retrieval -. &nbsp;retry: reproduction&nbsp; .-> reproduction;\n\tdiagnosis -. &nbsp;failure&nbsp; .-> abort;\n\tdiagnosis -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\tdiagnosis -. &nbsp;success&nbsp; .-> fix;\n\tfix -. &nbsp;failure&nbsp; .-> abort;\n\tfix -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\tfix -. &nbsp;success&nbsp; .-> regression_testing;\n\tregression_testing -. &nbsp;failure&nbsp; .-> abort;\n\tregression_testing -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\tregression_testing -. &nbsp;success&nbsp; .-> done;\n\treproduction -. &nbsp;limit&nbsp; .-> abort;\n\treproduction -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\treproduction -. &nbsp;success / failure&nbsp; .-> diagnosis;\n\tabort --> __end__;\n\tdone --> __end__;\n\tclassDef default fill:#f2f0ff,line-height:1.2\n\tclassDef first fill-opacity:0\n\tclassDef last fill:#bfb6fc\n";
    /// What it sends for the feature workflow.
    const FEATURE: &str = "---\nconfig:\n  flowchart:\n    curve: linear\n---\ngraph TD;\n\t__start__([<p>__start__</p>]):::first\n\trequirements_analysis(requirements_analysis)\n\timplementation(implementation)\n\ttest_writing(test_writing)\n\ttest_execution(test_execution)\n\tcode_review(code_review)\n\tdocumentation(documentation)\n\tadaptive_retrieval(adaptive_retrieval)\n\tdone(done)\n\tabort(abort)\n\t__end__([<p>__end__</p>]):::last\n\t__start__ --> requirements_analysis;\n\tadaptive_retrieval -. &nbsp;limit&nbsp; .-> abort;\n\tadaptive_retrieval -. &nbsp;retry: documentation&nbsp; .-> documentation;\n\tadaptive_retrieval -. &nbsp;retry: implementation&nbsp; .-> implementation;\n\tadaptive_retrieval -. &nbsp;retry: requirements_analysis&nbsp; .-> requirements_analysis;\n\tadaptive_retrieval -. &nbsp;retry: test_writing&nbsp; .-> test_writing;\n\tcode_review -. &nbsp;failure&nbsp; .-> abort;\n\tcode_review -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\tcode_review -. &nbsp;success&nbsp; .-> documentation;\n\tdocumentation -. &nbsp;limit&nbsp; .-> abort;\n\tdocumentation -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\tdocumentation -. &nbsp;success / failure&nbsp; .-> done;\n\timplementation -. &nbsp;failure&nbsp; .-> abort;\n\timplementation -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\timplementation -. &nbsp;success&nbsp; .-> test_writing;\n\trequirements_analysis -. &nbsp;limit&nbsp; .-> abort;\n\trequirements_analysis -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\trequirements_analysis -. &nbsp;success / failure&nbsp; .-> implementation;\n\ttest_execution -. &nbsp;limit&nbsp; .-> abort;\n\ttest_execution -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\ttest_execution -. &nbsp;success / failure&nbsp; .-> code_review;\n\ttest_writing -. &nbsp;failure&nbsp; .-> abort;\n\ttest_writing -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\ttest_writing -. &nbsp;limit&nbsp; .-> code_review;\n\ttest_writing -. &nbsp;success&nbsp; .-> test_execution;\n\tabort --> __end__;\n\tdone --> __end__;\n\tclassDef default fill:#f2f0ff,line-height:1.2\n\tclassDef first fill-opacity:0\n\tclassDef last fill:#bfb6fc\n";

    /// Whether the segment from `a` to `b` (horizontal or vertical) enters the inside of `r`.
    fn enters(a: Point, b: Point, r: &Rectangle) -> bool {
        let (x0, x1) = (a.x.min(b.x), a.x.max(b.x));
        let (y0, y1) = (a.y.min(b.y), a.y.max(b.y));
        x1 > r.x + 0.5 && x0 < r.x + r.width - 0.5 && y1 > r.y + 0.5 && y0 < r.y + r.height - 0.5
    }

    /// A long edge ran straight down under the boxes of the layers it passed (the boxes are
    /// drawn over the edges), so it seemed to come out of them; the arrows into a node many
    /// edges return to fell off its side, and an edge leaving it started where one came in.
    #[test]
    fn no_edge_runs_through_a_box_and_each_goes_from_its_node_to_its_node() {
        for (name, source) in [("bug_fix", BUG_FIX), ("feature", FEATURE)] {
            let graph = parse(source).expect("a graph");
            let drawing = lay_out(&graph);
            assert_eq!(drawing.routes.len(), graph.edges.len());
            for (edge, route) in graph.edges.iter().zip(&drawing.routes) {
                let what = format!(
                    "{name}: {} -> {}",
                    graph.nodes[edge.from].label, graph.nodes[edge.to].label
                );
                for pair in route.points.windows(2) {
                    assert!(
                        pair[0].x == pair[1].x || pair[0].y == pair[1].y,
                        "{what}: at right angles: {pair:?}"
                    );
                    for (node, r) in graph.nodes.iter().zip(&drawing.boxes) {
                        assert!(
                            !enters(pair[0], pair[1], r),
                            "{what} runs through the box of {}: {pair:?} {r:?}",
                            node.label
                        );
                    }
                }
                let (from, to) = (drawing.boxes[edge.from], drawing.boxes[edge.to]);
                let start = route.points[0];
                let on_edge = |v: f32, lo: f32, len: f32| v >= lo && v <= lo + len;
                assert!(
                    (start.y == from.y + from.height && on_edge(start.x, from.x, from.width))
                        || (start.x == from.x + from.width && on_edge(start.y, from.y, from.height)),
                    "{what} starts on its node: {start:?} {from:?}"
                );
                let tip = route.tip;
                assert!(
                    match route.arrow {
                        Arrow::Down => tip.y == to.y && on_edge(tip.x, to.x, to.width),
                        Arrow::Left => tip.x == to.x + to.width && on_edge(tip.y, to.y, to.height),
                    },
                    "{what} points at its node: {tip:?} {to:?}"
                );
                let end = *route.points.last().expect("points");
                assert!(end.distance(tip) <= 5.0, "{what}: the line reaches its arrowhead");
                assert!(
                    route
                        .points
                        .iter()
                        .all(|p| p.x <= drawing.width && p.y <= drawing.height),
                    "{what} stays inside the drawing"
                );
            }
            // On each node's right side, the edges that leave or enter there keep apart.
            for (index, r) in drawing.boxes.iter().enumerate() {
                let mut ends: Vec<f32> = graph
                    .edges
                    .iter()
                    .zip(&drawing.routes)
                    .filter(|(_, route)| route.arrow == Arrow::Left)
                    .flat_map(|(e, route)| {
                        let out = (e.from == index).then_some(route.points[0].y);
                        let into = (e.to == index).then_some(route.tip.y);
                        out.into_iter().chain(into)
                    })
                    .collect();
                ends.sort_by(f32::total_cmp);
                for pair in ends.windows(2) {
                    assert!(
                        pair[1] - pair[0] >= 2.0,
                        "{name}: edges meet on the side of {}: {ends:?} {r:?}",
                        graph.nodes[index].label
                    );
                }
            }
        }
    }

    /// Issue 39, Iced item 5: the dashed edges crowded together: lanes 6 px apart, the
    /// channels of the edges leaving one node 2 px apart (edges of two nodes in one channel
    /// drawn over each other), the ends on a busy node's side 2 px apart. Where two edges run
    /// side by side, they keep `MIN_GAP` apart.
    #[test]
    fn edges_that_run_side_by_side_keep_apart() {
        const MIN_GAP: f32 = 5.0;
        for (name, source) in [("bug_fix", BUG_FIX), ("feature", FEATURE)] {
            let graph = parse(source).expect("a graph");
            let drawing = lay_out(&graph);
            let segments: Vec<(usize, Point, Point)> = drawing
                .routes
                .iter()
                .enumerate()
                .flat_map(|(i, r)| r.points.windows(2).map(move |w| (i, w[0], w[1])))
                .collect();
            let label = |i: usize| {
                let e = &graph.edges[i];
                format!("{} -> {}", graph.nodes[e.from].label, graph.nodes[e.to].label)
            };
            let mut crowded = Vec::new();
            for (k, &(i, a0, a1)) in segments.iter().enumerate() {
                for &(j, b0, b1) in &segments[k + 1..] {
                    if i == j {
                        continue;
                    }
                    let horizontal = |p: Point, q: Point| (p.y - q.y).abs() < 0.01 && (p.x - q.x).abs() > 0.01;
                    let vertical = |p: Point, q: Point| (p.x - q.x).abs() < 0.01 && (p.y - q.y).abs() > 0.01;
                    let overlap = |a: f32, b: f32, c: f32, d: f32| a.max(b).min(c.max(d)) - a.min(b).max(c.min(d));
                    let close = if horizontal(a0, a1) && horizontal(b0, b1) {
                        (a0.y - b0.y).abs() < MIN_GAP && overlap(a0.x, a1.x, b0.x, b1.x) > 1.0
                    } else if vertical(a0, a1) && vertical(b0, b1) {
                        (a0.x - b0.x).abs() < MIN_GAP && overlap(a0.y, a1.y, b0.y, b1.y) > 1.0
                    } else {
                        false
                    };
                    if close {
                        crowded.push(format!("{} / {}: {a0:?}-{a1:?} vs {b0:?}-{b1:?}", label(i), label(j)));
                    }
                }
            }
            assert!(
                crowded.is_empty(),
                "{name}: {} crowded pairs:\n{}",
                crowded.len(),
                crowded.join("\n")
            );
            // The arrowheads into one node keep apart too.
            for (index, _) in graph.nodes.iter().enumerate() {
                let mut tips: Vec<Point> = graph
                    .edges
                    .iter()
                    .zip(&drawing.routes)
                    .filter(|(e, _)| e.to == index)
                    .map(|(_, r)| r.tip)
                    .collect();
                tips.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
                for pair in tips.windows(2) {
                    assert!(
                        pair[0].distance(pair[1]) >= MIN_GAP,
                        "{name}: arrowheads into {} crowd: {tips:?}",
                        graph.nodes[index].label
                    );
                }
            }
        }
    }
}
