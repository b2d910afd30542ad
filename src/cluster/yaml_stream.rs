//! YAML dumps read document by document, and a large List item by item: `kubectl get -A -o
//! yaml` prints ONE document, and parsed whole it took 10 to 13 times its size (2.0-2.7 GB
//! for 200 MB). kubectl (and every YAML emitter we know) writes a List's items as a block
//! sequence under `items:`, each item starting with `- ` at one indentation and everything
//! else of the item deeper; such an item is a YAML document of its own once de-indented.
//! Anything that does not fit that shape is parsed whole, as before.

use super::files::{LoadProblem, Loaded, accept_item_at, accept_value};
use serde_json::Value;
use std::ops::Range;

/// Documents smaller than this are parsed whole: splitting saves nothing there.
const SPLIT_MIN: usize = 1 << 20;

/// The parser's safety budget, scaled to the document: a document cannot hold more nodes or
/// events than it has bytes; the alias and anchor limits, which are what guard against YAML
/// bombs, stay as they are.
fn yaml_options(len: usize) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = budget.max_nodes.max(len);
    budget.max_events = budget.max_events.max(len.saturating_mul(2));
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(len);
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

fn parse(text: &str) -> Result<Value, String> {
    serde_saphyr::from_str_with_options::<Value>(text, yaml_options(text.len()))
        .map_err(|e| e.to_string().lines().next().unwrap_or("").to_string())
}

pub fn load_yaml(bytes: &[u8], origin: &str, out: &mut Loaded) {
    for (i, (line, range)) in split_docs(bytes).into_iter().enumerate() {
        let document = i + 1;
        let raw = &bytes[range];
        let text = match std::str::from_utf8(raw) {
            Ok(t) => t,
            Err(e) => {
                let (l, col) = super::input::line_col(raw, e.valid_up_to());
                let at = line + l - 1;
                out.problems.push(LoadProblem {
                    origin: origin.into(),
                    document,
                    line: Some(line),
                    message: format!(
                        "invalid UTF-8 at line {at}, column {col}; this document is skipped"
                    ),
                });
                continue;
            }
        };
        if text.len() >= SPLIT_MIN && load_list_by_items(text, origin, document, line, out) {
            continue;
        }
        match parse(text) {
            Ok(v) => accept_value(v, origin, document, Some(line), out),
            Err(first) => out.problems.push(LoadProblem {
                origin: origin.into(),
                document,
                line: Some(line),
                message: format!("invalid YAML: {first}"),
            }),
        }
    }
}

/// Lines of `bytes` as (byte range without the newline, start offset).
fn lines(bytes: &[u8]) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= bytes.len() {
            return None;
        }
        let end = bytes[pos..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |i| pos + i);
        let r = pos..end;
        pos = end + 1;
        Some(r)
    })
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Splits multi-document YAML on `---` lines ourselves, so that one malformed document is
/// reported and the parser resumes at the next one. Returns (first line, byte range).
fn split_docs(bytes: &[u8]) -> Vec<(usize, Range<usize>)> {
    let mut docs = Vec::new();
    let mut start = 0;
    let mut start_line = 1;
    for (i, r) in lines(bytes).enumerate() {
        let line = trim_cr(&bytes[r.clone()]);
        let is_sep = line == b"---" || line.starts_with(b"--- ") || line.starts_with(b"---\t");
        if is_sep {
            docs.push((start_line, start..r.start));
            start = (r.end + 1).min(bytes.len());
            start_line = i + 2;
            // `--- {inline}` starts a document on the separator line itself.
            let rest = line[3..].trim_ascii();
            if !rest.is_empty() && !rest.starts_with(b"#") {
                start = r.start + 3;
                start_line = i + 1;
            }
        } else if line == b"..." {
            docs.push((start_line, start..r.start));
            start = (r.end + 1).min(bytes.len());
            start_line = i + 2;
        }
    }
    docs.push((start_line, start..bytes.len()));
    docs.retain(|(_, r)| {
        lines(&bytes[r.clone()]).any(|l| {
            let t = bytes[r.start + l.start..r.start + l.end].trim_ascii();
            !t.is_empty() && !t.starts_with(b"#")
        })
    });
    docs
}

/// The shape of a List document: its other keys, and where its items are.
struct ListShape {
    envelope: String,
    indent: usize,
    /// Byte range of the item lines.
    items: Range<usize>,
    /// 0-based line of `items.start` in the document.
    first_line: usize,
}

fn leading_spaces(line: &str) -> usize {
    line.bytes().take_while(|b| *b == b' ').count()
}

fn is_item_start(line: &str, indent: usize) -> bool {
    leading_spaces(line) == indent && {
        let rest = &line[indent..];
        rest == "-" || rest.starts_with("- ")
    }
}

fn blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

fn shape(doc: &str) -> Option<ListShape> {
    let mut envelope = String::new();
    let mut pos = 0;
    let mut found: Option<(usize, usize, usize)> = None; // (indent, start byte, line)
    let mut items_end = None;
    for (line_no, raw) in doc.split_inclusive('\n').enumerate() {
        let line = raw.trim_end_matches(['\n', '\r']);
        if line.starts_with('\t') {
            return None;
        }
        match (found, items_end) {
            (None, _) if line.trim_end() == "items:" => found = Some((usize::MAX, 0, 0)),
            (None, _) => envelope.push_str(raw),
            (Some((usize::MAX, _, _)), _) => {
                if blank_or_comment(line) {
                } else if line.trim_start().starts_with('-') {
                    let indent = leading_spaces(line);
                    if !is_item_start(line, indent) {
                        return None;
                    }
                    found = Some((indent, pos, line_no));
                } else {
                    // `items:` with no sequence under it (null): nothing to split.
                    return None;
                }
            }
            (Some((indent, _, _)), None) => {
                let lead = leading_spaces(line);
                if !(blank_or_comment(line) || lead > indent || is_item_start(line, indent)) {
                    if lead != 0 {
                        return None;
                    }
                    items_end = Some(pos);
                    envelope.push_str(raw);
                }
            }
            (Some(_), Some(_)) => {
                if line.trim_end() == "items:" {
                    return None;
                }
                envelope.push_str(raw);
            }
        }
        pos += raw.len();
    }
    let (indent, start, first_line) = found?;
    if indent == usize::MAX {
        return None;
    }
    Some(ListShape {
        envelope,
        indent,
        items: start..items_end.unwrap_or(doc.len()),
        first_line,
    })
}

/// Parses a List document item by item. False (and nothing added to `out`) when the document
/// is not of that shape or an item does not parse on its own: then it is parsed whole.
fn load_list_by_items(
    doc: &str,
    origin: &str,
    document: usize,
    line: usize,
    out: &mut Loaded,
) -> bool {
    let Some(shape) = shape(doc) else {
        return false;
    };
    let Ok(envelope) = parse(&shape.envelope) else {
        return false;
    };
    let kind = envelope.get("kind").and_then(Value::as_str);
    let api = envelope.get("apiVersion").and_then(Value::as_str);
    if !kind.is_some_and(|k| k.ends_with("List")) {
        return false;
    }
    let list_api = match (api, kind) {
        (Some(a), Some(k)) if k != "List" => k
            .strip_suffix("List")
            .filter(|k| !k.is_empty())
            .map(|k| (a, k)),
        _ => None,
    };
    let before = out.mark();
    let cut = shape.indent + 2;
    let mut item = String::new();
    let mut item_line = 0;
    let mut n = 0;
    let flush = |item: &mut String, item_line: usize, n: usize, out: &mut Loaded| -> bool {
        if item.trim().is_empty() {
            return true;
        }
        let ok = match parse(item) {
            Ok(v) => {
                accept_item_at(v, list_api, origin, document, Some(item_line), n, out);
                true
            }
            Err(_) => false,
        };
        item.clear();
        ok
    };
    let lines = doc[shape.items.clone()].split_inclusive('\n');
    for (line_no, raw) in (line + shape.first_line..).zip(lines) {
        let l = raw.trim_end_matches(['\n', '\r']);
        if is_item_start(l, shape.indent) {
            if n > 0 && !flush(&mut item, item_line, n, out) {
                return rollback(out, before);
            }
            n += 1;
            item_line = line_no;
            item.push_str(raw.get(cut.min(raw.len())..).unwrap_or(""));
        } else {
            let strip = leading_spaces(l).min(cut);
            item.push_str(&raw[strip..]);
        }
    }
    if n > 0 && !flush(&mut item, item_line, n, out) {
        return rollback(out, before);
    }
    true
}

fn rollback(out: &mut Loaded, mark: [usize; 5]) -> bool {
    out.rollback(mark);
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big_list(n: usize, indent: &str) -> String {
        let mut text = String::from("apiVersion: v1\nitems:\n");
        for i in 0..n {
            text.push_str(&format!(
                "{indent}- apiVersion: v1\n{indent}  kind: PersistentVolume\n{indent}  metadata:\n{indent}    name: pv-{i}\n{indent}    annotations:\n{indent}      note: |\n{indent}        - not an item\n{indent}        line two\n{indent}  spec: {{persistentVolumeReclaimPolicy: Delete}}\n"
            ));
        }
        text.push_str("kind: List\nmetadata:\n  resourceVersion: \"\"\n");
        text
    }

    #[test]
    fn a_large_list_is_read_item_by_item_with_the_same_result() {
        for indent in ["", "  "] {
            let text = big_list(8000, indent);
            assert!(text.len() > SPLIT_MIN);
            let mut split = Loaded::default();
            assert!(
                load_list_by_items(&text, "f", 1, 1, &mut split),
                "{indent:?}"
            );
            let mut whole = Loaded::default();
            accept_value(parse(&text).unwrap(), "f", 1, Some(1), &mut whole);
            assert!(split.problems.is_empty(), "{:?}", split.problems.first());
            assert_eq!(split.objects.len(), 8000);
            assert_eq!(
                split.objects.iter().map(|o| o.raw()).collect::<Vec<_>>(),
                whole.objects.iter().map(|o| o.raw()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn a_typed_list_gives_its_kind_to_items_even_when_kind_comes_last() {
        let text = "apiVersion: v1\nitems:\n- metadata: {name: a}\n- metadata: {name: b}\nkind: PersistentVolumeList\n";
        let mut out = Loaded::default();
        assert!(load_list_by_items(text, "f", 1, 1, &mut out));
        assert_eq!(out.objects.len(), 2);
        assert_eq!(out.objects[1].meta().name, "b");
    }

    #[test]
    fn documents_of_another_shape_are_left_to_the_whole_parser() {
        let mut out = Loaded::default();
        assert!(!load_list_by_items(
            "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: a}\n",
            "f",
            1,
            1,
            &mut out
        ));
        assert!(!load_list_by_items(
            "items:\n- &a {x: 1}\n- *a\nkind: List\n",
            "f",
            1,
            1,
            &mut out
        ));
        assert!(out.objects.is_empty() && out.problems.is_empty());
    }
}
