//! The object text kept for the YAML view and the history's diffs, packed: a small LZ77 over
//! the document itself, a fixed dictionary of what Kubernetes JSON repeats (field names, common
//! values) and a *template*: the first text packed under the same key (one per kind), since
//! the PVCs of one cluster differ mostly in names, UIDs and times. Unpacked only on demand.
//!
//! Format: the template's number plus one as a LEB128 number (0: none), then a sequence of
//! tokens. A byte `0nnnnnnn` is followed by `n + 1` literal bytes; a byte `1nnnnnnn` copies
//! `n + MIN_MATCH` bytes from `offset` bytes back (a LEB128 number that follows), counted in
//! the dictionary followed by the template and the text.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// What most watched objects' JSON contains; the most frequent last (the shortest offsets).
const DICT: &[u8] = concat!(
    r#""source":{"component":"","reason":"","message":"","firstTimestamp":"","lastTimestamp":"","count":1,"type":"Normal","#,
    r#""involvedObject":{"apiVersion":"backups.cozystack.io/v1alpha1","kind":"RestoreJob","#,
    r#""helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","spec":{"suspend":false,"#,
    r#""velero.io/v1","kind":"Restore","velero.io/restore-name":"","velero.io/restore-uid":""#,
    r#""cdi.kubevirt.io/v1beta1","kind":"DataVolume","cdi.kubevirt.io/storage."#,
    r#""kubevirt.io/v1","kind":"VirtualMachine","runStrategy":"Always","#,
    r#""conditions":[{"lastTransitionTime":"","message":"","reason":"","status":"True","type":"Ready"}],"#,
    r#""ownerReferences":[{"apiVersion":"","blockOwnerDeletion":true,"controller":true,"kind":"","name":"","uid":""}],"#,
    r#""claimRef":{"apiVersion":"v1","kind":"PersistentVolumeClaim","name":"","namespace":"","resourceVersion":"","uid":""},"#,
    r#""csi":{"driver":"linstor.csi.linbit.com","fsType":"ext4","volumeHandle":"pvc-"},"#,
    r#""persistentVolumeReclaimPolicy":"Retain","persistentVolumeReclaimPolicy":"Delete","nodeAffinity":{"#,
    r#"{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"annotations":{"pv.kubernetes.io/provisioned-by":""#,
    r#""pv.kubernetes.io/bind-completed":"yes","pv.kubernetes.io/bound-by-controller":"yes","#,
    r#""volume.beta.kubernetes.io/storage-provisioner":"","volume.kubernetes.io/storage-provisioner":""#,
    r#""finalizers":["kubernetes.io/pv-protection"],"finalizers":["kubernetes.io/pvc-protection"],"#,
    r#""app.kubernetes.io/instance":"","app.kubernetes.io/managed-by":"Helm","app.kubernetes.io/name":""#,
    r#""spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"Gi"}},"storageClassName":""#,
    r#","volumeMode":"Filesystem","volumeName":"pvc-"},"status":{"accessModes":["ReadWriteOnce"],"#,
    r#""capacity":{"storage":"Gi"},"phase":"Bound"}}"#,
    r#"{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"annotations":{"#,
    r#""creationTimestamp":"2026-","labels":{"name":"","namespace":"tenant-","resourceVersion":"","uid":""#,
)
.as_bytes();

const MIN_MATCH: usize = 4;
const MAX_MATCH: usize = MIN_MATCH + 127;
const MAX_LITERALS: usize = 128;
const HASH_BITS: u32 = 12;
/// Templates kept: one per kind is all that is asked for; past this, texts pack without one.
const TEMPLATES_MAX: usize = 64;
/// A template longer than this is cut: it only has to look like the texts packed after it.
const TEMPLATE_MAX_BYTES: usize = 4096;

#[derive(Clone, PartialEq, Eq)]
pub struct Packed(Box<[u8]>);

impl std::fmt::Debug for Packed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Packed({} bytes)", self.0.len())
    }
}

fn hash(b: &[u8]) -> usize {
    let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    (v.wrapping_mul(2_654_435_761) >> (32 - HASH_BITS)) as usize
}

fn seed(t: &mut [u32], buf: &[u8], from: usize) {
    for i in from..buf.len().saturating_sub(MIN_MATCH - 1) {
        t[hash(&buf[i..])] = i as u32;
    }
}

/// One template: its bytes behind the dictionary, and the hash table seeded with both.
struct Template {
    /// The dictionary followed by the template text.
    prefix: Vec<u8>,
    table: Vec<u32>,
}

fn dict_only() -> &'static Template {
    static T: OnceLock<Template> = OnceLock::new();
    T.get_or_init(|| {
        let mut table = vec![u32::MAX; 1 << HASH_BITS];
        seed(&mut table, DICT, 0);
        Template {
            prefix: DICT.to_vec(),
            table,
        }
    })
}

#[derive(Default)]
struct Templates {
    by_key: HashMap<String, usize>,
    list: Vec<Arc<Template>>,
}

fn templates() -> &'static Mutex<Templates> {
    static T: OnceLock<Mutex<Templates>> = OnceLock::new();
    T.get_or_init(Mutex::default)
}

/// The template of `key` and its number, made from `text` if `key` has none yet.
fn template_for(key: &str, text: &str) -> Option<(usize, Arc<Template>)> {
    let mut t = templates().lock().ok()?;
    if let Some(&i) = t.by_key.get(key) {
        return Some((i, Arc::clone(&t.list[i])));
    }
    if t.list.len() >= TEMPLATES_MAX {
        return None;
    }
    let mut cut = text.len().min(TEMPLATE_MAX_BYTES);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut prefix = DICT.to_vec();
    prefix.extend_from_slice(&text.as_bytes()[..cut]);
    let mut table = dict_only().table.clone();
    seed(
        &mut table,
        &prefix,
        DICT.len().saturating_sub(MIN_MATCH - 1),
    );
    let tpl = Arc::new(Template { prefix, table });
    let i = t.list.len();
    t.list.push(Arc::clone(&tpl));
    t.by_key.insert(key.to_string(), i);
    Some((i, tpl))
}

fn template_at(i: usize) -> Option<Arc<Template>> {
    templates().lock().ok()?.list.get(i).cloned()
}

fn push_leb(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A LEB128 number at `b[*i..]`, of at most five bytes.
fn read_leb(b: &[u8], i: &mut usize) -> Option<usize> {
    let mut n = 0usize;
    let mut shift = 0;
    loop {
        let x = *b.get(*i)?;
        *i += 1;
        n |= usize::from(x & 0x7f).checked_shl(shift)?;
        if x & 0x80 == 0 {
            return Some(n);
        }
        shift += 7;
        if shift > 28 {
            return None;
        }
    }
}

fn flush_literals(out: &mut Vec<u8>, lits: &[u8]) {
    for chunk in lits.chunks(MAX_LITERALS) {
        out.push((chunk.len() - 1) as u8);
        out.extend_from_slice(chunk);
    }
}

impl Packed {
    /// No text kept: unpacks to the empty string.
    pub fn none() -> Packed {
        Packed(Box::default())
    }

    /// Packs `text` against the dictionary alone.
    pub fn pack(text: &str) -> Packed {
        Self::encode(None, dict_only(), text)
    }

    /// Packs `text` against the dictionary and the template of `key` (the first text packed
    /// with this key becomes it).
    pub fn pack_like(key: &str, text: &str) -> Packed {
        match template_for(key, text) {
            Some((i, t)) => Self::encode(Some(i), &t, text),
            None => Self::pack(text),
        }
    }

    fn encode(id: Option<usize>, tpl: &Template, text: &str) -> Packed {
        let base = tpl.prefix.len();
        let mut buf = Vec::with_capacity(base + text.len());
        buf.extend_from_slice(&tpl.prefix);
        buf.extend_from_slice(text.as_bytes());
        let mut table = tpl.table.clone();
        let mut out = Vec::with_capacity(text.len() / 3);
        push_leb(&mut out, id.map_or(0, |i| i + 1));
        let mut lit_start = base;
        let mut i = base;
        while i + MIN_MATCH <= buf.len() {
            let h = hash(&buf[i..]);
            let cand = table[h];
            table[h] = i as u32;
            let cand = cand as usize;
            if cand != u32::MAX as usize && buf[cand..cand + MIN_MATCH] == buf[i..i + MIN_MATCH] {
                let mut len = MIN_MATCH;
                while len < MAX_MATCH && i + len < buf.len() && buf[cand + len] == buf[i + len] {
                    len += 1;
                }
                flush_literals(&mut out, &buf[lit_start..i]);
                out.push(0x80 | (len - MIN_MATCH) as u8);
                push_leb(&mut out, i - cand);
                for j in i + 1..(i + len).min(buf.len().saturating_sub(MIN_MATCH - 1)) {
                    table[hash(&buf[j..])] = j as u32;
                }
                i += len;
                lit_start = i;
            } else {
                i += 1;
            }
        }
        flush_literals(&mut out, &buf[lit_start..]);
        Packed(out.into_boxed_slice())
    }

    /// The text again; `None` only if the bytes were not made by `pack`.
    pub fn unpack(&self) -> Option<String> {
        let b = &self.0;
        if b.is_empty() {
            return Some(String::new());
        }
        let mut i = 0;
        let tpl = match read_leb(b, &mut i)? {
            0 => None,
            n => Some(template_at(n - 1)?),
        };
        let prefix: &[u8] = tpl.as_ref().map_or(DICT, |t| &t.prefix);
        let mut out = Vec::with_capacity(prefix.len() + b.len() * 4);
        out.extend_from_slice(prefix);
        while i < b.len() {
            let c = b[i];
            i += 1;
            if c & 0x80 == 0 {
                let n = usize::from(c) + 1;
                out.extend_from_slice(b.get(i..i + n)?);
                i += n;
            } else {
                let len = usize::from(c & 0x7f) + MIN_MATCH;
                let off = read_leb(b, &mut i)?;
                let from = out.len().checked_sub(off).filter(|_| off > 0)?;
                for k in 0..len {
                    let byte = out[from + k];
                    out.push(byte);
                }
            }
        }
        String::from_utf8(out.split_off(prefix.len())).ok()
    }

    /// Packed size in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_pvc_packs_small_and_comes_back_whole() {
        let pvc = r#"{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"annotations":{"pv.kubernetes.io/bind-completed":"yes"},"creationTimestamp":"2026-11-20T10:00:00Z","finalizers":["kubernetes.io/pvc-protection"],"labels":{"app.kubernetes.io/instance":"vm1"},"name":"vm-disk-data","namespace":"tenant-a","resourceVersion":"1234","uid":"0000-1111"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"10Gi"}},"storageClassName":"replicated","volumeMode":"Filesystem","volumeName":"pvc-0000-1111"},"status":{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"10Gi"},"phase":"Bound"}}"#;
        let p = Packed::pack(pvc);
        assert_eq!(p.unpack().as_deref(), Some(pvc));
        assert!(p.len() * 2 < pvc.len(), "{} of {}", p.len(), pvc.len());
    }

    #[test]
    fn bytes_not_made_by_pack_are_refused_not_a_panic() {
        for bad in [
            &[0x00, 0x05u8][..],
            &[0x00, 0x80, 0x7f],
            &[0x00, 0x80],
            &[0x00, 0x80, 0x00],
            &[0x00, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff],
            &[0x7f, 0x00, 0x41],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        ] {
            let _ = Packed(bad.into()).unpack();
        }
    }

    #[test]
    fn a_second_pvc_packs_against_the_first_to_what_differs() {
        let pvc = |n: u32| {
            format!(
                r#"{{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{{"labels":{{"app":"containerized-data-importer","apps.cozystack.io/application.kind":"VMDisk"}},"name":"vm-disk-bg{n}","namespace":"tenant-{n:05}","ownerReferences":[{{"apiVersion":"cdi.kubevirt.io/v1beta1","blockOwnerDeletion":true,"controller":true,"kind":"DataVolume","name":"vm-disk-bg{n}","uid":"{n:08}-aaaa-bbbb-cccc-{n:012}"}}],"uid":"{n:08}-1111-2222-3333-{n:012}"}},"spec":{{"accessModes":["ReadWriteMany"],"storageClassName":"replicated","volumeMode":"Block","volumeName":"pvc-{n:08}-1111-2222-3333-{n:012}"}}}}"#
            )
        };
        let key = "test/a_second_pvc_packs_against_the_first";
        let first = Packed::pack_like(key, &pvc(1));
        let second = Packed::pack_like(key, &pvc(2));
        assert_eq!(first.unpack(), Some(pvc(1)));
        assert_eq!(second.unpack(), Some(pvc(2)));
        let alone = Packed::pack(&pvc(2));
        assert!(
            second.len() * 2 < alone.len(),
            "{} against the template, {} alone",
            second.len(),
            alone.len()
        );
    }

    proptest! {
        #[test]
        fn any_text_comes_back_unchanged(s in "(\\PC|\\{\"kind\":\"|\"name\":\"|tenant-a|[a-z]{1,8}){0,80}") {
            prop_assert_eq!(Packed::pack(&s).unpack(), Some(s.clone()));
            // The first text under a key becomes its template, the rest pack against it.
            prop_assert_eq!(Packed::pack_like("test/proptest", &s).unpack(), Some(s));
        }
    }
}
