//! Reading what `kubectl get -o yaml|json` prints: a List, a single object, multi-document
//! YAML or concatenated JSON, in any mix. One broken document never hides the others.

use crate::model::{AnyObject, ParseError, parse_object};
use serde_json::Value;

/// A document that could not be used, with where it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadProblem {
    pub origin: String,
    /// 1-based document number in the file (YAML documents or JSON values).
    pub document: usize,
    /// 1-based line where the document starts, when known.
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for LoadProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: document {}", self.origin, self.document)?;
        if let Some(line) = self.line {
            write!(f, " (line {line})")?;
        }
        write!(f, ": {}", self.message)
    }
}

#[derive(Debug, Default)]
pub struct Loaded {
    pub objects: Vec<AnyObject>,
    pub problems: Vec<LoadProblem>,
    /// Objects of kinds restorewatch does not read, skipped silently but counted.
    pub ignored: usize,
}

/// Parses one file's text. `origin` names it in problems.
pub fn load_text(text: &str, origin: &str) -> Loaded {
    let mut out = Loaded::default();
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        load_json(text, origin, &mut out);
    } else {
        load_yaml(text, origin, &mut out);
    }
    out
}

fn load_json(text: &str, origin: &str, out: &mut Loaded) {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut doc = 0;
    loop {
        let offset = stream.byte_offset();
        match stream.next() {
            None => break,
            Some(Ok(v)) => {
                doc += 1;
                accept(v, origin, doc, Some(line_of(text, offset)), out);
            }
            Some(Err(e)) => {
                doc += 1;
                out.problems.push(LoadProblem {
                    origin: origin.into(),
                    document: doc,
                    line: Some(e.line()),
                    message: format!("invalid JSON: {e}"),
                });
                // A JSON stream cannot be resynchronised reliably after a syntax error.
                break;
            }
        }
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    let upto = text.get(..offset).unwrap_or(text);
    let skipped_ws = text.get(offset..).map_or(0, |rest| {
        rest.chars()
            .take_while(|c| c.is_whitespace())
            .filter(|c| *c == '\n')
            .count()
    });
    upto.matches('\n').count() + 1 + skipped_ws
}

/// Splits multi-document YAML on `---` lines ourselves, so that one malformed document is
/// reported and the parser resumes at the next one.
fn split_yaml(text: &str) -> Vec<(usize, String)> {
    let mut docs = Vec::new();
    let mut cur = String::new();
    let mut start_line = 1;
    for (i, line) in text.lines().enumerate() {
        let is_sep = line == "---" || line.starts_with("--- ") || line.starts_with("---\t");
        if is_sep {
            docs.push((start_line, std::mem::take(&mut cur)));
            start_line = i + 2;
            // `--- {inline}` starts a document on the separator line itself.
            if let Some(rest) = line.strip_prefix("---") {
                let rest = rest.trim();
                if !rest.is_empty() && !rest.starts_with('#') {
                    cur.push_str(rest);
                    cur.push('\n');
                    start_line = i + 1;
                }
            }
        } else if line == "..." {
            docs.push((start_line, std::mem::take(&mut cur)));
            start_line = i + 2;
        } else {
            cur.push_str(line);
            cur.push('\n');
        }
    }
    docs.push((start_line, cur));
    docs.retain(|(_, d)| {
        d.lines()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    });
    docs
}

/// The parser's safety budget, scaled to the document: `kubectl get -A -o yaml` on a large
/// cluster is one document of millions of nodes, far over the default of 250,000. A document
/// cannot hold more nodes or events than it has bytes; the alias and anchor limits, which are
/// what guard against YAML bombs, stay as they are.
fn yaml_options(len: usize) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = budget.max_nodes.max(len);
    budget.max_events = budget.max_events.max(len.saturating_mul(2));
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(len);
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

fn load_yaml(text: &str, origin: &str, out: &mut Loaded) {
    for (i, (line, doc)) in split_yaml(text).into_iter().enumerate() {
        match serde_saphyr::from_str_with_options::<Value>(&doc, yaml_options(doc.len())) {
            Ok(v) => accept(v, origin, i + 1, Some(line), out),
            Err(e) => {
                let first = e.to_string().lines().next().unwrap_or("").to_string();
                out.problems.push(LoadProblem {
                    origin: origin.into(),
                    document: i + 1,
                    line: Some(line),
                    message: format!("invalid YAML: {first}"),
                });
            }
        }
    }
}

fn accept(v: Value, origin: &str, document: usize, line: Option<usize>, out: &mut Loaded) {
    let problem = |message: String| LoadProblem {
        origin: origin.into(),
        document,
        line,
        message,
    };
    if v.is_null() {
        return;
    }
    let is_list = v
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k.ends_with("List"))
        && v.get("items").is_some_and(Value::is_array);
    if is_list || v.is_array() {
        let list_api = match (
            v.get("apiVersion").and_then(Value::as_str),
            v.get("kind").and_then(Value::as_str),
        ) {
            (Some(a), Some(k)) if k != "List" => Some((a.to_string(), k.to_string())),
            _ => None,
        };
        let items = match v {
            Value::Array(items) => items,
            Value::Object(mut m) => match m.remove("items") {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        // A typed list (`RestoreJobList` straight from the API) leaves apiVersion/kind off its
        // items: they are the list's, minus `List`.
        let list_kind = list_api
            .as_ref()
            .and_then(|(_, k)| k.strip_suffix("List"))
            .filter(|k| !k.is_empty());
        for (n, mut item) in items.into_iter().enumerate() {
            if let (Some(obj), Some((api, _)), Some(kind)) =
                (item.as_object_mut(), list_api.as_ref(), list_kind)
            {
                obj.entry("apiVersion")
                    .or_insert_with(|| Value::String(api.clone()));
                obj.entry("kind")
                    .or_insert_with(|| Value::String(kind.to_string()));
            }
            match parse_object(item) {
                Ok(o) => out.objects.push(o),
                Err(ParseError::UnknownKind { .. }) => out.ignored += 1,
                Err(e) => out.problems.push(problem(format!("item {}: {e}", n + 1))),
            }
        }
        return;
    }
    match parse_object(v) {
        Ok(o) => out.objects.push(o),
        Err(ParseError::UnknownKind { .. }) => out.ignored += 1,
        Err(e) => out.problems.push(problem(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_yaml_document_is_reported_and_the_rest_is_read() {
        let text = "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-a}\n---\nkind: [unclosed\n---\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: pv-b\n";
        let l = load_text(text, "dump.yaml");
        let names: Vec<_> = l.objects.iter().map(|o| o.meta().name.clone()).collect();
        assert_eq!(names, ["pv-a", "pv-b"]);
        assert_eq!(l.problems.len(), 1);
        assert_eq!(l.problems[0].document, 2);
        assert_eq!(l.problems[0].line, Some(5));
    }

    #[test]
    fn lists_json_streams_and_unknown_kinds() {
        let text = r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"a"}},{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}]}
{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"b"}}"#;
        let l = load_text(text, "-");
        assert_eq!(l.objects.len(), 2);
        assert_eq!(l.ignored, 1);
        assert!(l.problems.is_empty());
    }

    #[test]
    fn an_object_without_a_name_is_a_problem_not_a_crash() {
        let l = load_text(
            "apiVersion: v1\nkind: PersistentVolume\nmetadata: {}\n",
            "f",
        );
        assert!(l.objects.is_empty());
        assert_eq!(l.problems.len(), 1);
    }
}

#[cfg(test)]
mod big_tests {
    use super::*;

    /// `kubectl get -A -o yaml` of a large cluster is ONE document with millions of nodes; the
    /// parser's default budget (250,000 nodes) refused it.
    #[test]
    fn a_yaml_list_far_over_the_default_node_budget_loads() {
        let mut text = String::from("apiVersion: v1\nkind: List\nitems:\n");
        for i in 0..30_000 {
            text.push_str(&format!(
                "- apiVersion: v1\n  kind: PersistentVolume\n  metadata: {{name: pv-{i}, labels: {{a: b, c: d}}}}\n  spec: {{persistentVolumeReclaimPolicy: Delete}}\n"
            ));
        }
        let l = load_text(&text, "big.yaml");
        assert!(l.problems.is_empty(), "{:?}", l.problems.first());
        assert_eq!(l.objects.len(), 30_000);
    }
}
