//! A small, read-only string map for labels and annotations: one sorted boxed slice instead of
//! a `BTreeMap` (whose smallest node holds room for eleven entries), with the keys shared
//! between objects (every PVC carries the same few label keys).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StrMap(Box<[(Arc<str>, Box<str>)]>);

impl StrMap {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|i| &*self.0[i].1)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (&**k, &**v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(String, String)> for StrMap {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> Self {
        let mut v: Vec<(Arc<str>, Box<str>)> = iter
            .into_iter()
            .map(|(k, val)| (shared(&k), val.into_boxed_str()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        // A JSON object cannot repeat a key, but a map built by hand could: the last one wins,
        // as in a map.
        v.reverse();
        v.dedup_by(|a, b| a.0 == b.0);
        v.reverse();
        StrMap(v.into_boxed_slice())
    }
}

/// How many distinct keys are shared; past it (a cluster with endless distinct keys) new keys
/// are simply not shared, so the table never grows without bound.
const SHARED_MAX: usize = 4096;

/// The one copy of `key` shared by every map that holds it.
fn shared(key: &str) -> Arc<str> {
    static TABLE: OnceLock<Mutex<HashSet<Arc<str>>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| Mutex::new(HashSet::new()));
    let Ok(mut t) = table.lock() else {
        return Arc::from(key);
    };
    if let Some(k) = t.get(key) {
        return Arc::clone(k);
    }
    let k: Arc<str> = Arc::from(key);
    if t.len() < SHARED_MAX {
        t.insert(Arc::clone(&k));
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_find_every_key_and_the_keys_are_shared() {
        let a: StrMap = [("b", "2"), ("a", "1"), ("c", "3")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let b: StrMap = [("a".to_string(), "x".to_string())].into_iter().collect();
        assert_eq!(a.get("a"), Some("1"));
        assert_eq!(a.get("b"), Some("2"));
        assert_eq!(a.get("c"), Some("3"));
        assert_eq!(a.get("d"), None);
        assert_eq!(
            a.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert!(Arc::ptr_eq(&a.0[0].0, &b.0[0].0));
    }
}
