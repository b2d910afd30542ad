//! The few Kubernetes protobuf request bodies kubectl sends to built-in APIs (its typed clients
//! prefer protobuf): `SelfSubjectAccessReview` (`kubectl auth can-i`), `SelfSubjectReview`
//! (`kubectl auth whoami`) and metadata-only objects
//! such as a Namespace (`kubectl create namespace`). Decoded to the JSON the rest of the
//! emulator works on; anything else is refused with 415 so the client knows to send JSON.

use serde_json::{Map, Value, json};

pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";
const MAGIC: &[u8] = b"k8s\0";

/// One field of a protobuf message: number and, for length-delimited fields, the bytes.
enum Field<'a> {
    Bytes(u32, &'a [u8]),
    Other,
}

fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut out = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        out |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(out);
        }
    }
    None
}

fn fields(buf: &[u8]) -> Option<Vec<Field<'_>>> {
    let mut pos = 0;
    let mut out = Vec::new();
    while pos < buf.len() {
        let key = varint(buf, &mut pos)?;
        let num = u32::try_from(key >> 3).ok()?;
        match key & 7 {
            0 => {
                varint(buf, &mut pos)?;
                out.push(Field::Other);
            }
            1 => {
                pos = pos.checked_add(8).filter(|p| *p <= buf.len())?;
                out.push(Field::Other);
            }
            2 => {
                let len = usize::try_from(varint(buf, &mut pos)?).ok()?;
                let end = pos.checked_add(len).filter(|e| *e <= buf.len())?;
                out.push(Field::Bytes(num, &buf[pos..end]));
                pos = end;
            }
            5 => {
                pos = pos.checked_add(4).filter(|p| *p <= buf.len())?;
                out.push(Field::Other);
            }
            _ => return None,
        }
    }
    Some(out)
}

fn strings(buf: &[u8], names: &[(u32, &str)]) -> Option<Map<String, Value>> {
    let mut m = Map::new();
    for f in fields(buf)? {
        if let Field::Bytes(n, b) = f
            && let Some((_, name)) = names.iter().find(|(num, _)| *num == n)
        {
            m.insert((*name).into(), json!(String::from_utf8_lossy(b)));
        }
    }
    Some(m)
}

fn string_map(entries: &[&[u8]]) -> Option<Value> {
    let mut m = Map::new();
    for e in entries {
        let kv = strings(e, &[(1, "k"), (2, "v")])?;
        let k = kv
            .get("k")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        m.insert(k, kv.get("v").cloned().unwrap_or(json!("")));
    }
    Some(Value::Object(m))
}

fn object_meta(buf: &[u8]) -> Option<Value> {
    let mut meta = strings(buf, &[(1, "name"), (2, "generateName"), (3, "namespace")])?;
    let fs = fields(buf)?;
    let collect = |want: u32| -> Vec<&[u8]> {
        fs.iter()
            .filter_map(|f| match f {
                Field::Bytes(n, b) if *n == want => Some(*b),
                _ => None,
            })
            .collect()
    };
    for (num, name) in [(11, "labels"), (12, "annotations")] {
        let entries = collect(num);
        if !entries.is_empty() {
            meta.insert(name.into(), string_map(&entries)?);
        }
    }
    Some(Value::Object(meta))
}

fn sub(buf: &[u8], want: u32) -> Option<Option<&[u8]>> {
    Some(fields(buf)?.into_iter().find_map(|f| match f {
        Field::Bytes(n, b) if n == want => Some(b),
        _ => None,
    }))
}

/// Decodes a protobuf body into JSON; `None` when it is not one of the supported shapes.
pub fn decode(body: &[u8]) -> Option<Value> {
    let rest = body.strip_prefix(MAGIC)?;
    let type_meta = sub(rest, 1)??;
    let tm = strings(type_meta, &[(1, "apiVersion"), (2, "kind")])?;
    let raw = sub(rest, 2)?.unwrap_or(&[]);
    let api_version = tm.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = tm.get("kind").and_then(Value::as_str).unwrap_or("");
    let metadata = match sub(raw, 1)? {
        Some(m) => object_meta(m)?,
        None => json!({}),
    };
    let mut obj = json!({"apiVersion": api_version, "kind": kind, "metadata": metadata});
    match kind {
        "SelfSubjectAccessReview" => {
            let spec = sub(raw, 2)?.unwrap_or(&[]);
            let mut s = Map::new();
            if let Some(ra) = sub(spec, 1)? {
                let names = [
                    (1, "namespace"),
                    (2, "verb"),
                    (3, "group"),
                    (4, "version"),
                    (5, "resource"),
                    (6, "subresource"),
                    (7, "name"),
                ];
                s.insert(
                    "resourceAttributes".into(),
                    Value::Object(strings(ra, &names)?),
                );
            }
            if let Some(nra) = sub(spec, 2)? {
                s.insert(
                    "nonResourceAttributes".into(),
                    Value::Object(strings(nra, &[(1, "path"), (2, "verb")])?),
                );
            }
            obj["spec"] = Value::Object(s);
        }
        // Objects whose spec kubectl leaves empty when it creates them; a SelfSubjectReview
        // (`kubectl auth whoami`) has no spec at all.
        "Namespace" | "SelfSubjectReview" => {}
        _ => return None,
    }
    Some(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ld(num: u32, bytes: &[u8]) -> Vec<u8> {
        let mut v = vec![((num << 3) | 2) as u8, bytes.len() as u8];
        v.extend_from_slice(bytes);
        v
    }

    #[test]
    fn decodes_an_access_review() {
        let ra = [
            ld(1, b"ns"),
            ld(2, b"delete"),
            ld(5, b"persistentvolumeclaims"),
        ]
        .concat();
        let spec = ld(1, &ra);
        let raw = [ld(1, &[]), ld(2, &spec)].concat();
        let tm = [
            ld(1, b"authorization.k8s.io/v1"),
            ld(2, b"SelfSubjectAccessReview"),
        ]
        .concat();
        let body = [MAGIC.to_vec(), ld(1, &tm), ld(2, &raw)].concat();
        let v = decode(&body).unwrap();
        assert_eq!(v["spec"]["resourceAttributes"]["verb"], "delete");
        assert_eq!(
            v["spec"]["resourceAttributes"]["resource"],
            "persistentvolumeclaims"
        );
        assert_eq!(decode(b"k8s\0\xff"), None);
        assert_eq!(decode(b"{}"), None);
    }
}
