//! Reading what `kubectl get -o yaml|json` prints: a List, a single object, multi-document
//! YAML or concatenated JSON, in any mix. One broken document never hides the others.

use crate::model::{AnyObject, ParseError, parse_object};
use serde_json::Value;

/// A document that could not be used, with where it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadProblem {
    pub origin: String,
    /// 1-based document number in the file (YAML documents or JSON values); 0 for a position
    /// in the file as a whole.
    pub document: usize,
    /// 1-based line where the document starts, when known.
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for LoadProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Document 0: a position in the file as a whole (invalid UTF-8 in JSON).
        if self.document == 0 {
            write!(f, "{}", self.origin)?;
        } else {
            write!(f, "{}: document {}", self.origin, self.document)?;
            if let Some(line) = self.line {
                write!(f, " (line {line})")?;
            }
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
    /// Every object as read, of any kind, nothing stripped: filled instead of `objects` by
    /// `load_values` (the emulator's `--load` replays a dump as it was).
    pub values: Vec<Value>,
    /// The backup controller's Deployments found among the skipped kinds, as `(name, image)`
    /// (`controller_image::from_files`): the image is evidence in a dump as it is live.
    pub controller_images: Vec<(String, String)>,
    keep_values: bool,
}

impl Loaded {
    /// Takes an object: as read (`load_values`) or parsed for the analysis.
    fn accept(&mut self, v: Value, problem: impl FnOnce(String) -> LoadProblem) {
        if self.keep_values {
            match v {
                Value::Object(_) => self.values.push(v),
                _ => self.problems.push(problem("not an object".into())),
            }
            return;
        }
        if let Some(found) = super::controller_image::deployment_image(&v) {
            self.controller_images.push(found);
        }
        match parse_object(v) {
            Ok(o) => self.objects.push(o),
            Err(ParseError::UnknownKind { .. }) => self.ignored += 1,
            Err(e) => self.problems.push(problem(e.to_string())),
        }
    }

    /// How much has been taken, to go back to (see `rollback`).
    pub(crate) fn mark(&self) -> [usize; 5] {
        [
            self.objects.len(),
            self.problems.len(),
            self.ignored,
            self.values.len(),
            self.controller_images.len(),
        ]
    }

    /// Forgets what was taken after `mark`.
    pub(crate) fn rollback(&mut self, [objects, problems, ignored, values, images]: [usize; 5]) {
        self.objects.truncate(objects);
        self.problems.truncate(problems);
        self.ignored = ignored;
        self.values.truncate(values);
        self.controller_images.truncate(images);
    }
}

/// Parses one file's text. `origin` names it in problems.
pub fn load_text(text: &str, origin: &str) -> Loaded {
    load_bytes(text.as_bytes(), origin)
}

/// Parses one file's bytes: JSON as a stream of values whose List `items` are read one at a
/// time, YAML document by document (and a large List item by item). Invalid UTF-8 is reported
/// with its position, and only what holds it is skipped.
pub fn load_bytes(bytes: &[u8], origin: &str) -> Loaded {
    let mut out = Loaded::default();
    load_into(bytes, origin, &mut out);
    out
}

/// What `load_bytes` reads, every object kept as read (`Loaded::values`), whatever its kind:
/// the emulator loads any dump `check` reads.
pub fn load_values(bytes: &[u8], origin: &str) -> Loaded {
    let mut out = Loaded {
        keep_values: true,
        ..Loaded::default()
    };
    load_into(bytes, origin, &mut out);
    out
}

fn load_into(bytes: &[u8], origin: &str, out: &mut Loaded) {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'{' | b'[')) {
        load_json_bytes(bytes, origin, out);
    } else {
        super::yaml_stream::load_yaml(bytes, origin, out);
    }
}

fn load_json_bytes(bytes: &[u8], origin: &str, out: &mut Loaded) {
    match std::str::from_utf8(bytes) {
        Ok(text) => super::json_stream::load_json(text, origin, out),
        Err(_) => {
            // Say where each bad sequence is; parse the rest with them replaced, and skip the
            // objects that held one, since a replaced byte could be in a name.
            let mut offset = 0;
            let mut text = String::with_capacity(bytes.len());
            for chunk in bytes.utf8_chunks() {
                text.push_str(chunk.valid());
                offset += chunk.valid().len();
                if !chunk.invalid().is_empty() {
                    let (line, col) = super::input::line_col(bytes, offset);
                    out.problems.push(LoadProblem {
                        origin: origin.into(),
                        document: 0,
                        line: Some(line),
                        message: format!(
                            "invalid UTF-8 at line {line}, column {col} (byte {offset}); the object holding it is skipped"
                        ),
                    });
                    text.push(char::REPLACEMENT_CHARACTER);
                    offset += chunk.invalid().len();
                }
            }
            let mut parsed = Loaded {
                keep_values: out.keep_values,
                ..Loaded::default()
            };
            super::json_stream::load_json(&text, origin, &mut parsed);
            out.problems.append(&mut parsed.problems);
            out.ignored += parsed.ignored;
            out.controller_images.append(&mut parsed.controller_images);
            out.objects.extend(
                parsed
                    .objects
                    .into_iter()
                    .filter(|o| !o.raw().contains(char::REPLACEMENT_CHARACTER)),
            );
            out.values.extend(
                parsed
                    .values
                    .into_iter()
                    .filter(|v| !v.to_string().contains(char::REPLACEMENT_CHARACTER)),
            );
        }
    }
}

/// One parsed YAML or JSON value: a List (or an array) is flattened into its items.
pub(crate) fn accept_value(
    v: Value,
    origin: &str,
    document: usize,
    line: Option<usize>,
    out: &mut Loaded,
) {
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
            (Some(a), Some(k)) if k != "List" => k
                .strip_suffix("List")
                .filter(|k| !k.is_empty())
                .map(|k| (a.to_string(), k.to_string())),
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
        let list_api = list_api.as_ref().map(|(a, k)| (a.as_str(), k.as_str()));
        for (n, item) in items.into_iter().enumerate() {
            accept_item_at(item, list_api, origin, document, line, n + 1, out);
        }
        return;
    }
    out.accept(v, problem);
}

/// Item `n` (1-based) of a List. A typed list (`RestoreJobList` straight from the API) leaves
/// apiVersion/kind off its items: `list_api` gives them (the list's, minus `List`).
pub(crate) fn accept_item(
    item: Value,
    list_api: Option<(&str, &str)>,
    origin: &str,
    document: usize,
    n: usize,
    out: &mut Loaded,
) {
    accept_item_at(item, list_api, origin, document, None, n, out);
}

pub(crate) fn accept_item_at(
    mut item: Value,
    list_api: Option<(&str, &str)>,
    origin: &str,
    document: usize,
    line: Option<usize>,
    n: usize,
    out: &mut Loaded,
) {
    if let (Some(obj), Some((api, kind))) = (item.as_object_mut(), list_api) {
        obj.entry("apiVersion")
            .or_insert_with(|| Value::String(api.to_string()));
        obj.entry("kind")
            .or_insert_with(|| Value::String(kind.to_string()));
    }
    out.accept(item, |e| LoadProblem {
        origin: origin.into(),
        document,
        line,
        message: format!("item {n}: {e}"),
    });
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
