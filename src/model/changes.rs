//! What a source says changed between two snapshots, so that the analysis above it can redo
//! only what the change touches instead of everything.

use super::Kind;
use super::snapshot::ObjKey;

/// The changes folded into one snapshot since the previous one a source handed out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Objects inserted, updated or deleted, each once per batch.
    pub objects: Vec<(Kind, ObjKey)>,
    /// Kinds changed wholesale (a relist replaced every object): every object of them may differ.
    pub kinds: Vec<Kind>,
    /// Some kind's health, the scope or the source changed: staleness of every finding may move.
    pub health: bool,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty() && self.kinds.is_empty() && !self.health
    }

    pub fn object(&mut self, kind: Kind, key: ObjKey) {
        self.objects.push((kind, key));
    }

    pub fn kind(&mut self, kind: Kind) {
        if !self.kinds.contains(&kind) {
            self.kinds.push(kind);
        }
    }

    /// Folds `later` into `self` (two batches handed over as one).
    pub fn merge(&mut self, later: Changes) {
        self.objects.extend(later.objects);
        for k in later.kinds {
            self.kind(k);
        }
        self.health |= later.health;
    }

    /// Everything may have changed (a first picture, a context switch).
    pub fn everything() -> Changes {
        Changes {
            objects: Vec::new(),
            kinds: Kind::all().collect(),
            health: true,
        }
    }
}
