//! JSON dumps parsed as a stream: the `items` of a List are turned into objects one at a time,
//! so the whole List never exists as one `serde_json::Value` tree (which took ~8 times the
//! input: 1.6 GB for a 200 MB dump).

use super::files::{Loaded, accept_item, accept_value};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// Parses every top-level value of `text` (one, or several concatenated) into `out`.
pub fn load_json(text: &str, origin: &str, out: &mut Loaded) {
    let mut de = serde_json::Deserializer::from_str(text);
    let mut doc = 0;
    // `end` only looks past whitespace: an error means another value follows.
    while de.end().is_err() {
        doc += 1;
        let seed = TopSeed {
            sink: Sink {
                origin,
                doc,
                out,
                items: 0,
                pending: Vec::new(),
            },
        };
        if let Err(e) = seed.deserialize(&mut de) {
            out.problems.push(super::files::LoadProblem {
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

/// Where items go as they are parsed.
struct Sink<'a> {
    origin: &'a str,
    doc: usize,
    out: &'a mut Loaded,
    items: usize,
    /// Items without their own `apiVersion`/`kind` (a typed `RestoreJobList` straight from the
    /// API): they take the list's, which kubectl prints after `items`.
    pending: Vec<(usize, Value)>,
}

impl Sink<'_> {
    fn item(&mut self, v: Value) {
        self.items += 1;
        let typed = v.get("apiVersion").is_some() && v.get("kind").is_some();
        if typed {
            accept_item(v, None, self.origin, self.doc, self.items, self.out);
        } else {
            self.pending.push((self.items, v));
        }
    }

    fn finish_list(&mut self, list_api: Option<(&str, &str)>) {
        for (n, v) in std::mem::take(&mut self.pending) {
            accept_item(v, list_api, self.origin, self.doc, n, self.out);
        }
    }
}

struct TopSeed<'a> {
    sink: Sink<'a>,
}

impl<'de> DeserializeSeed<'de> for TopSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(TopVisitor { sink: self.sink })
    }
}

struct TopVisitor<'a> {
    sink: Sink<'a>,
}

impl<'de> Visitor<'de> for TopVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object or List")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let mut envelope = Map::new();
        let mut had_items = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" && !had_items {
                had_items = true;
                map.next_value_seed(ItemsSeed {
                    sink: &mut self.sink,
                })?;
            } else {
                let v: Value = map.next_value()?;
                envelope.insert(key, v);
            }
        }
        let kind = envelope.get("kind").and_then(Value::as_str);
        let api = envelope.get("apiVersion").and_then(Value::as_str);
        if had_items {
            let list_api = match (api, kind) {
                (Some(a), Some(k)) if k != "List" => k
                    .strip_suffix("List")
                    .filter(|k| !k.is_empty())
                    .map(|k| (a, k)),
                _ => None,
            };
            self.sink.finish_list(list_api);
            return Ok(());
        }
        accept_value(
            Value::Object(envelope),
            self.sink.origin,
            self.sink.doc,
            None,
            self.sink.out,
        );
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, seq: A) -> Result<(), A::Error> {
        ItemsVisitor {
            sink: &mut self.sink,
        }
        .visit_seq(seq)?;
        self.sink.finish_list(None);
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.scalar(Value::Bool(v));
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.scalar(Value::from(v));
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.scalar(Value::from(v));
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.scalar(Value::from(v));
        Ok(())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.scalar(Value::from(v));
        Ok(())
    }
}

impl TopVisitor<'_> {
    fn scalar(self, v: Value) {
        accept_value(v, self.sink.origin, self.sink.doc, None, self.sink.out);
    }
}

struct ItemsSeed<'s, 'a> {
    sink: &'s mut Sink<'a>,
}

impl<'de> DeserializeSeed<'de> for ItemsSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(ItemsVisitor { sink: self.sink })
    }
}

struct ItemsVisitor<'s, 'a> {
    sink: &'s mut Sink<'a>,
}

impl<'de> Visitor<'de> for ItemsVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<Value>()? {
            self.sink.item(v);
        }
        Ok(())
    }

    // `items: null` or another non-array: nothing to read.
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map
            .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
            .is_some()
        {}
        Ok(())
    }
}
