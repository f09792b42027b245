//! The plan graph a dry run sends as a Mermaid flowchart (a ```` ```mermaid ```` block in the
//! agent's message, LangGraph's `draw_mermaid` output): parsed into nodes and edges and laid
//! out in layers, so the client draws it as a graph rather than showing its source. Only what
//! LangGraph writes is read: `id(label)` / `id([label])` nodes, `-->` (always) and `-.->`
//! (conditional) edges, and the same with a label (`a -. &nbsp;success&nbsp; .-> b`,
//! `a -- &nbsp;text&nbsp; --> b`: ided labels the router's edges success, failure, retry or
//! limit); front matter, `classDef` lines and styling are skipped.

use std::collections::HashMap;

/// One stage (or the start/end marker) of the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub id: String,
    pub label: String,
    /// Layer (0 at the top) and position within the layer.
    pub layer: usize,
    pub slot: usize,
}

/// One edge; `conditional` for the router's choices (`-.->`); `label` what leads along it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    pub conditional: bool,
    pub label: Option<String>,
}

/// A parsed, laid-out graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanGraph {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    /// Nodes per layer.
    pub layers: Vec<usize>,
}

/// A piece of agent text: prose, or a graph that was a Mermaid block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Text(String),
    Graph(PlanGraph),
}

/// Splits agent text at its ```` ```mermaid ```` blocks; a block that does not parse as a
/// flowchart stays text. Tabs become spaces (they showed as empty boxes).
pub fn segments(text: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```mermaid") {
        let body_start = start + "```mermaid".len();
        let Some(len) = rest[body_start..].find("```") else {
            break;
        };
        let body = &rest[body_start..body_start + len];
        match parse(body) {
            Some(graph) => {
                push_text(&mut out, &rest[..start]);
                out.push(Segment::Graph(graph));
            }
            None => push_text(&mut out, &rest[..body_start + len + 3]),
        }
        rest = &rest[body_start + len + 3..];
    }
    push_text(&mut out, rest);
    out
}

fn push_text(out: &mut Vec<Segment>, text: &str) {
    let text = text.replace('\t', "    ");
    let trimmed = text.trim_matches('\n');
    if !trimmed.trim().is_empty() {
        out.push(Segment::Text(trimmed.to_owned()));
    }
}

/// Parses a Mermaid flowchart; `None` when it holds no edge.
pub fn parse(source: &str) -> Option<PlanGraph> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut edges = Vec::new();
    let mut in_front_matter = false;
    let mut node = |id: &str, label: Option<&str>, nodes: &mut Vec<Node>| -> usize {
        if let Some(&i) = index.get(id) {
            if let Some(label) = label {
                nodes[i].label = label.to_owned();
            }
            return i;
        }
        index.insert(id.to_owned(), nodes.len());
        nodes.push(Node {
            id: id.to_owned(),
            label: label.map_or_else(|| display_name(id), str::to_owned),
            layer: 0,
            slot: 0,
        });
        nodes.len() - 1
    };
    for line in source.lines().map(str::trim) {
        if line == "---" {
            in_front_matter = !in_front_matter;
            continue;
        }
        if in_front_matter
            || line.is_empty()
            || line.starts_with("graph ")
            || line.starts_with("flowchart ")
            || line.starts_with("classDef")
            || line.starts_with("%%")
        {
            continue;
        }
        let line = line.trim_end_matches(';');
        if let Some((from, to, conditional, label)) = edge(line) {
            let (from, to) = (node_id(from), node_id(to));
            if from.is_empty() || to.is_empty() {
                continue;
            }
            let from = node(&from, None, &mut nodes);
            let to = node(&to, None, &mut nodes);
            edges.push(Edge {
                from,
                to,
                conditional,
                label,
            });
        } else if let Some(open) = line.find('(') {
            let id = line[..open].trim();
            let label = strip_label(&line[open..]);
            if !id.is_empty() {
                let label = display_name(&label);
                node(id, Some(&label), &mut nodes);
            }
        }
    }
    if edges.is_empty() {
        return None;
    }
    let layers = lay_out(&mut nodes, &edges);
    Some(PlanGraph { nodes, edges, layers })
}

/// `(from, to, conditional, label)` of an edge line: `a -.-> b`, `a --> b`, `a -. text .-> b` or
/// `a -- text --> b` (the label without Mermaid's `&nbsp;` padding).
fn edge(line: &str) -> Option<(&str, &str, bool, Option<String>)> {
    for (open, close, conditional) in [(" -. ", " .-> ", true), (" -- ", " --> ", false)] {
        if let Some((from, rest)) = line.split_once(open)
            && let Some((label, to)) = rest.split_once(close)
        {
            let label = label.replace("&nbsp;", " ").trim().to_owned();
            return Some((from, to, conditional, (!label.is_empty()).then_some(label)));
        }
    }
    [("-.->", true), ("-->", false)]
        .into_iter()
        .find_map(|(arrow, conditional)| line.split_once(arrow).map(|(a, b)| (a, b, conditional, None)))
}

/// `a` of `a(label):::class` or `a`.
fn node_id(text: &str) -> String {
    let text = text.trim();
    let end = text.find(['(', '[', ':', ' ']).unwrap_or(text.len());
    text[..end].to_owned()
}

/// The text of `(label)`, `([<p>label</p>])` and the like, without a `:::class` suffix.
fn strip_label(text: &str) -> String {
    let text = text.split(":::").next().unwrap_or(text);
    let text = text.trim_matches(|c| matches!(c, '(' | ')' | '[' | ']' | '{' | '}' | '"'));
    text.replace("<p>", "").replace("</p>", "").trim().to_owned()
}

/// `__start__` → `start`; other names stay.
fn display_name(id: &str) -> String {
    let trimmed = id.trim_matches('_');
    if trimmed.is_empty() {
        id.to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// Layers by longest path from the sources over the graph without its back edges (found by a
/// depth-first walk from the first node); slots in order of first appearance.
fn lay_out(nodes: &mut [Node], edges: &[Edge]) -> Vec<usize> {
    let n = nodes.len();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in edges {
        out[e.from].push(e.to);
    }
    // Back edges: those closing a cycle in a depth-first walk.
    let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 done
    let mut back = std::collections::HashSet::new();
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        state[root] = 1;
        while let Some((v, i)) = stack.pop() {
            if i < out[v].len() {
                stack.push((v, i + 1));
                let w = out[v][i];
                match state[w] {
                    0 => {
                        state[w] = 1;
                        stack.push((w, 0));
                    }
                    1 => {
                        back.insert((v, w));
                    }
                    _ => {}
                }
            } else {
                state[v] = 2;
            }
        }
    }
    // Longest path over the forward edges (a DAG now): relax in topological order.
    let mut indegree = vec![0usize; n];
    for e in edges.iter().filter(|e| !back.contains(&(e.from, e.to))) {
        indegree[e.to] += 1;
    }
    let mut layer = vec![0usize; n];
    let mut ready: std::collections::VecDeque<usize> = (0..n).filter(|&v| indegree[v] == 0).collect();
    while let Some(v) = ready.pop_front() {
        for &w in &out[v] {
            if back.contains(&(v, w)) {
                continue;
            }
            layer[w] = layer[w].max(layer[v] + 1);
            indegree[w] -= 1;
            if indegree[w] == 0 {
                ready.push_back(w);
            }
        }
    }
    let depth = layer.iter().max().map_or(0, |m| m + 1);
    let mut counts = vec![0usize; depth];
    for (v, node) in nodes.iter_mut().enumerate() {
        node.layer = layer[v];
        node.slot = counts[layer[v]];
        counts[layer[v]] += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `graph_mermaid` printed for the feature workflow (tabs and all).
    const LANGGRAPH: &str = "---\nconfig:\n  flowchart:\n    curve: linear\n---\ngraph TD;\n\t__start__([<p>__start__</p>]):::first\n\trequirements_analysis(requirements_analysis)\n\timplementation(implementation)\n\ttest_writing(test_writing)\n\tadaptive_retrieval(adaptive_retrieval)\n\tdone(done)\n\tabort(abort)\n\t__end__([<p>__end__</p>]):::last\n\t__start__ --> requirements_analysis;\n\tadaptive_retrieval -.-> abort;\n\tadaptive_retrieval -.-> implementation;\n\tadaptive_retrieval -.-> requirements_analysis;\n\timplementation -.-> adaptive_retrieval;\n\timplementation -.-> test_writing;\n\trequirements_analysis -.-> adaptive_retrieval;\n\trequirements_analysis -.-> implementation;\n\ttest_writing -.-> done;\n\tabort --> __end__;\n\tdone --> __end__;\n\tclassDef default fill:#f2f0ff,line-height:1.2\n";

    #[test]
    fn langgraphs_flowchart_parses_into_layered_nodes_and_edges() {
        let graph = parse(LANGGRAPH).expect("a graph");
        let labels: Vec<&str> = graph.nodes.iter().map(|n| n.label.as_str()).collect();
        assert_eq!(labels[0], "start");
        assert!(labels.contains(&"end") && labels.contains(&"implementation"));
        assert_eq!(graph.edges.len(), 11);
        assert_eq!(graph.edges.iter().filter(|e| e.conditional).count(), 8);
        let layer = |label: &str| graph.nodes.iter().find(|n| n.label == label).unwrap().layer;
        assert_eq!(layer("start"), 0);
        assert!(layer("requirements_analysis") < layer("implementation"));
        assert!(layer("implementation") < layer("test_writing"));
        assert!(layer("done") < layer("end"));
        assert_eq!(graph.layers.iter().sum::<usize>(), graph.nodes.len());
    }

    #[test]
    fn labelled_edges_keep_their_label_and_their_kind() {
        let source = "graph TD;\n\t__start__ --> fix;\n\tfix -. &nbsp;success&nbsp; .-> done;\n\tfix -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\tadaptive_retrieval -. &nbsp;retry: fix&nbsp; .-> fix;\n\tdone -- &nbsp;end&nbsp; --> __end__;\n";
        let graph = parse(source).expect("a graph");
        let shown: Vec<(String, String, bool, Option<&str>)> = graph
            .edges
            .iter()
            .map(|e| {
                (
                    graph.nodes[e.from].id.clone(),
                    graph.nodes[e.to].id.clone(),
                    e.conditional,
                    e.label.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("__start__".into(), "fix".into(), false, None),
                ("fix".into(), "done".into(), true, Some("success")),
                ("fix".into(), "adaptive_retrieval".into(), true, Some("retry")),
                ("adaptive_retrieval".into(), "fix".into(), true, Some("retry: fix")),
                ("done".into(), "__end__".into(), false, Some("end")),
            ]
        );
    }

    #[test]
    fn a_mermaid_block_becomes_a_graph_between_its_prose_and_tabs_leave() {
        let text = format!("Dry run: planned.\n\n```mermaid\n{LANGGRAPH}\n```\n\nNotes:\n\t- one");
        let parts = segments(&text);
        assert_eq!(parts.len(), 3, "{parts:?}");
        assert_eq!(parts[0], Segment::Text("Dry run: planned.".into()));
        assert!(matches!(parts[1], Segment::Graph(_)));
        assert_eq!(parts[2], Segment::Text("Notes:\n    - one".into()));
        let plain = segments("no graph here");
        assert_eq!(plain, [Segment::Text("no graph here".into())]);
        let broken = segments("```mermaid\nnot a flowchart\n```");
        assert!(matches!(&broken[..], [Segment::Text(t)] if t.contains("not a flowchart")));
    }
}
