//! Reading typed values out of arbitrary JSON without ever failing the whole object.

use super::field::Field;
use jiff::Timestamp;
use serde_json::Value;
use std::collections::BTreeMap;

/// Longest rendering of an unreadable value kept for messages; cluster data can be huge.
const INVALID_PREVIEW: usize = 40;

pub fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for key in path {
        cur = cur.as_object()?.get(*key)?;
    }
    // An explicit null reads as absent, as the API server treats it.
    (!cur.is_null()).then_some(cur)
}

fn preview(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > INVALID_PREVIEW {
        let cut: String = s.chars().take(INVALID_PREVIEW).collect();
        format!("{cut}…")
    } else {
        s
    }
}

pub fn str_at(v: &Value, path: &[&str]) -> Field<String> {
    match at(v, path) {
        None => Field::Missing,
        Some(Value::String(s)) => Field::Known(s.clone()),
        Some(other) => Field::Invalid(preview(other)),
    }
}

/// `str_at`, the value shared with every object holding the same one: for the few values
/// thousands of objects repeat (phases, storage classes, sizes), which would otherwise cost an
/// allocation each.
pub fn shared_at(v: &Value, path: &[&str]) -> Field<std::sync::Arc<str>> {
    str_at(v, path).map(|s| super::history::shared(&s))
}

/// `opt_str`, shared as `shared_at` is.
pub fn opt_shared(v: &Value, path: &[&str]) -> Option<std::sync::Arc<str>> {
    at(v, path)
        .and_then(Value::as_str)
        .map(super::history::shared)
}

/// A plain optional string where a wrong type is as good as absent (names, reasons): used only
/// where showing "unknown" would add nothing.
pub fn opt_str(v: &Value, path: &[&str]) -> Option<String> {
    at(v, path).and_then(Value::as_str).map(str::to_string)
}

pub fn bool_at(v: &Value, path: &[&str]) -> Field<bool> {
    match at(v, path) {
        None => Field::Missing,
        Some(Value::Bool(b)) => Field::Known(*b),
        Some(other) => Field::Invalid(preview(other)),
    }
}

pub fn i64_at(v: &Value, path: &[&str]) -> Field<i64> {
    match at(v, path) {
        None => Field::Missing,
        Some(Value::Number(n)) => match n.as_i64() {
            Some(i) => Field::Known(i),
            None => match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Field::Known(f as i64),
                _ => Field::Invalid(n.to_string()),
            },
        },
        Some(other) => Field::Invalid(preview(other)),
    }
}

pub fn time_at(v: &Value, path: &[&str]) -> Field<Timestamp> {
    match at(v, path) {
        None => Field::Missing,
        Some(Value::String(s)) => match s.parse::<Timestamp>() {
            Ok(t) => Field::Known(t),
            Err(_) => Field::Invalid(preview(&Value::String(s.clone()))),
        },
        Some(other) => Field::Invalid(preview(other)),
    }
}

pub fn map_at(v: &Value, path: &[&str]) -> BTreeMap<String, String> {
    let Some(obj) = at(v, path).and_then(Value::as_object) else {
        return BTreeMap::new();
    };
    obj.iter()
        .map(|(k, v)| {
            let val = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), val)
        })
        .collect()
}

pub fn array_at<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    at(v, path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

pub fn str_list(v: &Value, path: &[&str]) -> Vec<String> {
    array_at(v, path)
        .iter()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect::<Vec<_>>()
        .into_boxed_slice()
        // Kept in the store for the session: no spare capacity.
        .into_vec()
}
