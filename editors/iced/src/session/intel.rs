//! ided's search and code intelligence as the client shows them: a search's hits, a symbol's
//! definitions and references, each a place to open (file and 1-based line) with a label. Read
//! from the JSON of the `_ided/intel/<capability>` answers (`SearchAnswer`, `DefinitionResult`,
//! `ReferencesResult`: docs/acp.md); paths ided gives relative to the workspace are made
//! absolute. No iced types here.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// What was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// A search of the index (`search_code`, or `search_docs` with `docs`).
    Search { text: String, docs: bool },
    /// Where the symbol at `file:line:column` is defined.
    Definition { file: PathBuf, line: u32, column: u32 },
    /// Every use of the symbol at `file:line:column`.
    References { file: PathBuf, line: u32, column: u32 },
}

impl Query {
    /// The registry capability that answers it.
    pub fn capability(&self) -> &'static str {
        match self {
            Query::Search { docs: false, .. } => "search_code",
            Query::Search { docs: true, .. } => "search_docs",
            Query::Definition { .. } => "find_definition",
            Query::References { .. } => "get_references",
        }
    }

    /// The capability's params (`file` relative to `workspace`, as ided takes it).
    pub fn params(&self, workspace: &Path) -> serde_json::Map<String, Value> {
        let relative = |file: &Path| file.strip_prefix(workspace).unwrap_or(file).display().to_string();
        let value = match self {
            Query::Search { text, .. } => serde_json::json!({ "query": text, "k": SEARCH_HITS }),
            Query::Definition { file, line, column } => {
                serde_json::json!({ "file": relative(file), "line": line, "column": column, "max_chars": 400 })
            }
            Query::References { file, line, column } => {
                serde_json::json!({ "file": relative(file), "line": line, "column": column, "max_results": 200 })
            }
        };
        match value {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        }
    }

    /// How the question reads in the results' title.
    pub fn describe(&self, workspace: &Path) -> String {
        let at = |file: &Path, line: &u32, column: &u32| {
            format!(
                "{}:{line}:{column}",
                file.strip_prefix(workspace).unwrap_or(file).display()
            )
        };
        match self {
            Query::Search { text, docs } => format!("“{text}” in the {}", if *docs { "docs" } else { "code" }),
            Query::Definition { file, line, column } => format!("definition of {}", at(file, line, column)),
            Query::References { file, line, column } => format!("references to {}", at(file, line, column)),
        }
    }
}

/// How many hits a search asks for.
pub const SEARCH_HITS: u32 = 30;

/// One place in the results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// Absolute path.
    pub path: PathBuf,
    /// 1-based line.
    pub line: u32,
    /// What is there: the symbol or heading, or the line's text.
    pub label: String,
    /// The first line of its text, or the function that holds it.
    pub detail: String,
    /// Outside the workspace (a library's stub).
    pub outside: bool,
}

/// A question's answer as the client shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub places: Vec<Place>,
    /// One line about the answer ("12 hits, lexical", "3 references in 2 files").
    pub summary: String,
    /// What ided noted (a language server still starting, a weak match, ...).
    pub notes: Vec<String>,
}

/// ided's `SearchAnswer` (lean hits).
#[derive(Deserialize)]
struct SearchAnswer {
    hits: Vec<SearchHit>,
    mode: String,
    #[serde(default)]
    matches: Option<String>,
    #[serde(default)]
    notes: Vec<String>,
}

#[derive(Deserialize)]
struct SearchHit {
    path: String,
    line: u32,
    #[serde(default)]
    symbol: Option<String>,
    #[serde(default)]
    snippet: String,
}

#[derive(Deserialize)]
struct Location {
    path: String,
    #[serde(default = "yes")]
    in_workspace: bool,
    range: Range,
    #[serde(default)]
    line_text: Option<String>,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
struct Range {
    start_line: u32,
}

#[derive(Deserialize)]
struct DefinitionResult {
    definitions: Vec<Definition>,
    #[serde(default)]
    notes: Vec<String>,
    #[serde(default)]
    server: Option<String>,
}

#[derive(Deserialize)]
struct Definition {
    location: Location,
    #[serde(default)]
    symbol: Option<String>,
}

#[derive(Deserialize)]
struct ReferencesResult {
    references: Vec<Reference>,
    total: u32,
    #[serde(default)]
    files: u32,
    #[serde(default)]
    notes: Vec<String>,
}

#[derive(Deserialize)]
struct Reference {
    location: Location,
    #[serde(default)]
    container: Option<Container>,
}

#[derive(Deserialize)]
struct Container {
    qualified_name: String,
}

/// Reads ided's answer to `query`; an answer that does not have the capability's shape is an
/// error saying so.
pub fn read_answer(query: &Query, value: Value, workspace: &Path) -> Result<Answer, String> {
    let absolute = |path: &str| {
        let path = Path::new(path);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            workspace.join(path)
        }
    };
    let shape = |e: serde_json::Error| format!("ided's {} answer could not be read: {e}", query.capability());
    match query {
        Query::Search { .. } => {
            let result: SearchAnswer = serde_json::from_value(value).map_err(shape)?;
            let places: Vec<Place> = result
                .hits
                .into_iter()
                .map(|hit| Place {
                    path: absolute(&hit.path),
                    line: hit.line,
                    label: hit.symbol.unwrap_or_default(),
                    detail: hit.snippet,
                    outside: false,
                })
                .collect();
            let mut summary = format!("{} ({})", count(places.len(), "hit", "hits"), result.mode);
            if result.matches.as_deref() == Some("none") {
                summary = format!("nothing matches: {summary}");
            } else if result.matches.as_deref() == Some("weak") {
                summary.push_str(", weak matches");
            }
            Ok(Answer {
                places,
                summary,
                notes: result.notes,
            })
        }
        Query::Definition { .. } => {
            let result: DefinitionResult = serde_json::from_value(value).map_err(shape)?;
            let places: Vec<Place> = result
                .definitions
                .into_iter()
                .map(|d| Place {
                    path: absolute(&d.location.path),
                    line: d.location.range.start_line,
                    label: d.symbol.unwrap_or_default(),
                    detail: d.location.line_text.unwrap_or_default(),
                    outside: !d.location.in_workspace,
                })
                .collect();
            let by = result.server.map(|s| format!(", {s}")).unwrap_or_default();
            Ok(Answer {
                summary: format!("{}{by}", count(places.len(), "definition", "definitions")),
                places,
                notes: result.notes,
            })
        }
        Query::References { .. } => {
            let result: ReferencesResult = serde_json::from_value(value).map_err(shape)?;
            let places: Vec<Place> = result
                .references
                .into_iter()
                .map(|r| Place {
                    path: absolute(&r.location.path),
                    line: r.location.range.start_line,
                    label: r.location.line_text.unwrap_or_default(),
                    detail: r.container.map(|c| c.qualified_name).unwrap_or_default(),
                    outside: !r.location.in_workspace,
                })
                .collect();
            let files = if result.files > 0 {
                format!(" in {}", count(result.files as usize, "file", "files"))
            } else {
                String::new()
            };
            Ok(Answer {
                summary: format!("{}{files}", count(result.total as usize, "reference", "references")),
                places,
                notes: result.notes,
            })
        }
    }
}

/// The 1-based column (in characters, as ided counts them) of byte `index` in `line`.
pub fn char_column(line: &str, index: usize) -> u32 {
    let mut end = index.min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].chars().count() as u32 + 1
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_search_answer_becomes_places_in_the_workspace() {
        let ws = Path::new("/ws");
        let query = Query::Search {
            text: "divide".into(),
            docs: false,
        };
        assert_eq!(query.capability(), "search_code");
        assert_eq!(query.params(ws)["query"], "divide");
        let answer = read_answer(
            &query,
            json!({"mode": "lexical", "vectors": 0.0, "matches": "strong",
                "hits": [{"path": "calc.py", "line": 5, "end_line": 6, "symbol": "divide",
                    "snippet": "def divide(a, b):", "score": 1.75}]}),
            ws,
        )
        .unwrap();
        assert_eq!(answer.summary, "1 hit (lexical)");
        assert_eq!(
            answer.places,
            [Place {
                path: "/ws/calc.py".into(),
                line: 5,
                label: "divide".into(),
                detail: "def divide(a, b):".into(),
                outside: false
            }]
        );
    }

    #[test]
    fn definitions_and_references_become_places_and_a_bad_answer_an_error() {
        let ws = Path::new("/ws");
        let at = Query::Definition {
            file: "/ws/app.py".into(),
            line: 2,
            column: 7,
        };
        assert_eq!(at.params(ws)["file"], "app.py", "relative, as ided takes it");
        let answer = read_answer(
            &at,
            json!({"query": "app.py:2:7", "total": 1, "server": "basedpyright", "definitions": [{"symbol": "calc.add",
                "location": {"path": "calc.py", "in_workspace": true, "line_text": "def add(a, b):",
                    "range": {"start_line": 1, "start_column": 5, "end_line": 1, "end_column": 8}}}]}),
            ws,
        )
        .unwrap();
        assert_eq!(answer.summary, "1 definition, basedpyright");
        assert_eq!(
            (answer.places[0].path.as_path(), answer.places[0].line),
            (Path::new("/ws/calc.py"), 1)
        );
        let refs = Query::References {
            file: "/ws/app.py".into(),
            line: 2,
            column: 7,
        };
        let answer = read_answer(
            &refs,
            json!({"query": "add", "total": 2, "files": 2, "references": [
                {"location": {"path": "calc.py", "range": {"start_line": 1, "start_column": 5, "end_line": 1, "end_column": 8}, "line_text": "def add(a, b):"}, "is_declaration": true},
                {"location": {"path": "app.py", "range": {"start_line": 2, "start_column": 7, "end_line": 2, "end_column": 10}, "line_text": "print(add(1, 2))"},
                 "container": {"kind": "function", "name": "main", "qualified_name": "main", "range": {"start_line": 1, "start_column": 1, "end_line": 2, "end_column": 1}}}]}),
            ws,
        )
        .unwrap();
        assert_eq!(answer.summary, "2 references in 2 files");
        assert_eq!(answer.places[1].detail, "main");
        let bad = read_answer(&refs, json!({"hits": []}), ws).unwrap_err();
        assert!(bad.contains("get_references answer could not be read"), "{bad}");
    }

    #[test]
    fn a_byte_index_becomes_a_one_based_character_column() {
        assert_eq!(char_column("print(add(1, 2))", 6), 7);
        assert_eq!(char_column("s = 'é' + add(1)", 11), 11, "é is two bytes, one character");
        assert_eq!(char_column("abc", 99), 4);
    }
}
