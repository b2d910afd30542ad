//! The object text kept for the YAML view, packed: a small LZ77 over the document itself and a
//! fixed dictionary of what Kubernetes JSON repeats (field names, common values), so that the
//! text costs about a third of its size while nobody looks at it. Unpacked only on demand.
//!
//! Format: a sequence of tokens. A byte `0nnnnnnn` is followed by `n + 1` literal bytes; a
//! byte `1nnnnnnn` copies `n + MIN_MATCH` bytes from `offset` bytes back (a LEB128 number that
//! follows), counted in the dictionary followed by the text.

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

fn seeded_table() -> &'static [u32] {
    static TABLE: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = vec![u32::MAX; 1 << HASH_BITS];
        for i in 0..DICT.len().saturating_sub(MIN_MATCH - 1) {
            t[hash(&DICT[i..])] = i as u32;
        }
        t
    })
}

fn flush_literals(out: &mut Vec<u8>, lits: &[u8]) {
    for chunk in lits.chunks(MAX_LITERALS) {
        out.push((chunk.len() - 1) as u8);
        out.extend_from_slice(chunk);
    }
}

impl Packed {
    pub fn pack(text: &str) -> Packed {
        let mut buf = Vec::with_capacity(DICT.len() + text.len());
        buf.extend_from_slice(DICT);
        buf.extend_from_slice(text.as_bytes());
        let mut table = seeded_table().to_vec();
        let mut out = Vec::with_capacity(text.len() / 2);
        let mut lit_start = DICT.len();
        let mut i = DICT.len();
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
                let mut off = i - cand;
                loop {
                    let b = (off & 0x7f) as u8;
                    off >>= 7;
                    if off == 0 {
                        out.push(b);
                        break;
                    }
                    out.push(b | 0x80);
                }
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
        let mut out = Vec::with_capacity(DICT.len() + self.0.len() * 3);
        out.extend_from_slice(DICT);
        let b = &self.0;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            i += 1;
            if c & 0x80 == 0 {
                let n = usize::from(c) + 1;
                out.extend_from_slice(b.get(i..i + n)?);
                i += n;
            } else {
                let len = usize::from(c & 0x7f) + MIN_MATCH;
                let mut off = 0usize;
                let mut shift = 0;
                loop {
                    let x = *b.get(i)?;
                    i += 1;
                    off |= usize::from(x & 0x7f).checked_shl(shift)?;
                    if x & 0x80 == 0 {
                        break;
                    }
                    shift += 7;
                    if shift > 28 {
                        return None;
                    }
                }
                let from = out.len().checked_sub(off).filter(|_| off > 0)?;
                for k in 0..len {
                    let byte = out[from + k];
                    out.push(byte);
                }
            }
        }
        String::from_utf8(out.split_off(DICT.len())).ok()
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
            &[0x05u8][..],
            &[0x80, 0x7f],
            &[0x80],
            &[0x80, 0x00],
            &[0x80, 0xff, 0xff, 0xff, 0xff, 0xff],
        ] {
            let _ = Packed(bad.into()).unpack();
        }
    }

    proptest! {
        #[test]
        fn any_text_comes_back_unchanged(s in "(\\PC|\\{\"kind\":\"|\"name\":\"|tenant-a|[a-z]{1,8}){0,80}") {
            prop_assert_eq!(Packed::pack(&s).unpack(), Some(s));
        }
    }
}
