//! Deletions the live watch saw, remembered a while: a finding resting on an object's absence
//! can then say when it went and who owned it (why the garbage collector may have taken it).

use super::snapshot::ObjKey;
use crate::model::Kind;
use jiff::Timestamp;

/// One deletion the live watch saw: what, when, and who owned it (why the garbage collector
/// may have taken it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tombstone {
    pub kind: Kind,
    pub key: ObjKey,
    pub uid: String,
    /// When the watch saw it go (the store's clock).
    pub at: Timestamp,
    pub owners: Vec<crate::model::OwnerRef>,
}

impl Tombstone {
    /// The tombstone of the object with this metadata, seen gone at `at`.
    pub fn of(kind: Kind, key: ObjKey, meta: &crate::model::Meta, at: Timestamp) -> Tombstone {
        Tombstone {
            kind,
            key,
            uid: meta.uid.to_string(),
            at,
            owners: meta.owners.to_vec(),
        }
    }
}

/// The most recent deletions, bounded so that a long-running dashboard keeps a fixed memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tombstones(std::collections::VecDeque<Tombstone>);

impl Tombstones {
    /// How many deletions are remembered.
    pub const MAX: usize = 256;

    pub fn push(&mut self, t: Tombstone) {
        if self.0.len() == Self::MAX {
            self.0.pop_front();
        }
        self.0.push_back(t);
    }

    /// The latest deletion of this object, if the watch saw one.
    pub fn last(&self, kind: Kind, namespace: &str, name: &str) -> Option<&Tombstone> {
        self.0
            .iter()
            .rev()
            .find(|t| t.kind == kind && t.key.namespace == namespace && t.key.name == name)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Every remembered deletion, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Tombstone> {
        self.0.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tombstone_tests {
    use super::*;

    fn tomb(name: &str, at: i64) -> Tombstone {
        Tombstone {
            kind: Kind::ObjectStore,
            key: ObjKey::new("ns", name),
            uid: format!("uid-{name}-{at}"),
            at: Timestamp::from_second(at).unwrap(),
            owners: Vec::new(),
        }
    }

    #[test]
    fn tombstones_keep_the_latest_deletions_up_to_their_bound() {
        let mut t = Tombstones::default();
        for i in 0..(Tombstones::MAX as i64 + 10) {
            t.push(tomb(if i % 2 == 0 { "a" } else { "b" }, i));
        }
        assert_eq!(t.len(), Tombstones::MAX);
        // The newest deletion of a name wins.
        let last = Tombstones::MAX as i64 + 8;
        assert_eq!(
            t.last(Kind::ObjectStore, "ns", "a").map(|x| x.uid.clone()),
            Some(format!("uid-a-{last}"))
        );
        assert!(t.last(Kind::CnpgCluster, "ns", "a").is_none());
        assert!(t.last(Kind::ObjectStore, "other", "a").is_none());
    }
}
