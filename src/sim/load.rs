//! Reading kubectl dumps and manifests: a `List` (or `<Kind>List`), a single object, JSON or
//! multi-document YAML, any mix of kinds.

use serde_json::Value;

/// Every object in `text`, lists flattened, read as `check --snapshot` reads it (the same
/// reader: no parser budget a large dump breaches). Items of a typed list
/// (`PersistentVolumeClaimList`) that lack `apiVersion`/`kind` get them from the list. Any
/// document that cannot be read is an error here; `sim serve --load` reports it and loads the
/// rest (`read_dump`).
pub fn parse_objects(text: &str) -> anyhow::Result<Vec<Value>> {
    let loaded = read_dump(text.as_bytes(), "the dump");
    match loaded.problems.first() {
        Some(p) => anyhow::bail!("{p}"),
        None => Ok(loaded.values),
    }
}

/// Every object a dump holds (`values`), and the documents that could not be read
/// (`problems`, with file and document number).
pub fn read_dump(bytes: &[u8], origin: &str) -> crate::cluster::files::Loaded {
    crate::cluster::files::load_values(bytes, origin)
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
