//! Reading kubectl dumps and manifests: a `List` (or `<Kind>List`), a single object, JSON or
//! multi-document YAML, any mix of kinds.

use anyhow::Context;
use serde_json::Value;

/// Every object in `text`, lists flattened. Items of a typed list (`PersistentVolumeClaimList`)
/// that lack `apiVersion`/`kind` get them from the list.
pub fn parse_objects(text: &str) -> anyhow::Result<Vec<Value>> {
    let docs: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(v) => vec![v],
        Err(_) => serde_saphyr::from_multiple::<Value>(text).context("parsing YAML")?,
    };
    let mut out = Vec::new();
    for doc in docs {
        flatten(doc, &mut out);
    }
    Ok(out)
}

fn flatten(doc: Value, out: &mut Vec<Value>) {
    if doc.is_null() {
        return;
    }
    let kind = doc
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if let Some(items) = doc.get("items").and_then(Value::as_array)
        && kind.ends_with("List")
    {
        let item_kind = kind
            .strip_suffix("List")
            .filter(|k| !k.is_empty())
            .map(str::to_string);
        let api_version = doc.get("apiVersion").cloned();
        for item in items.clone() {
            let mut item = item;
            if let Some(o) = item.as_object_mut() {
                if let (Some(k), false) = (&item_kind, o.contains_key("kind")) {
                    o.insert("kind".into(), Value::String(k.clone()));
                }
                if let (Some(av), false) = (&api_version, o.contains_key("apiVersion")) {
                    o.insert("apiVersion".into(), av.clone());
                }
            }
            flatten(item, out);
        }
        return;
    }
    out.push(doc);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_documents() {
        let yaml = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n---\napiVersion: v1\nkind: PersistentVolumeClaimList\nitems:\n- metadata: {name: p, namespace: a}\n---\n";
        let objs = parse_objects(yaml).unwrap();
        assert_eq!(objs.len(), 2);
        assert_eq!(objs[1]["kind"], "PersistentVolumeClaim");
        assert_eq!(objs[1]["apiVersion"], "v1");
        let json = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x","resourceVersion":"42"}}"#;
        assert_eq!(
            parse_objects(json).unwrap()[0]["metadata"]["resourceVersion"],
            "42"
        );
    }
}
