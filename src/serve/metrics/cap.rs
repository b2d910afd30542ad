//! Which restores get series of their own. Whoever may create RestoreJobs in a namespace
//! decides how many there are: 2,000 of them would add ~6,000 series to every scrape, and the
//! monitoring database keeps each for weeks. Each namespace exports at most a fixed number of
//! restores (`serve --restores-per-namespace`), the ones a person must see first: those with a
//! finding (errors first), then those still running, then the newest. What is left out is
//! counted per namespace, so that the cap is visible rather than silent.

use crate::analysis::{Report, RestoreId, RestoreView, Severity};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The default cap: far above what a tenant restores by hand, far below what a loop creates.
pub const DEFAULT_RESTORES_PER_NAMESPACE: usize = 50;

/// The restores whose series are exported, and for each namespace with restores how many are
/// not (0 under the cap).
#[derive(Debug, Default)]
pub struct Kept<'a> {
    left_out: HashSet<&'a RestoreId>,
    pub dropped: BTreeMap<&'a str, usize>,
}

impl Kept<'_> {
    /// Whether `id`'s series are exported: every restore the cap did not leave out.
    pub fn has(&self, id: &RestoreId) -> bool {
        !self.left_out.contains(id)
    }
}

/// At most `per_namespace` restores of each namespace, the most important first.
pub fn choose(report: &Report, per_namespace: usize) -> Kept<'_> {
    let mut worst: HashMap<&RestoreId, Severity> = HashMap::new();
    for f in report.findings.iter() {
        if let Some(id) = &f.restore {
            let w = worst.entry(id).or_insert(f.severity);
            *w = (*w).max(f.severity);
        }
    }
    let mut by_ns: BTreeMap<&str, Vec<&RestoreView>> = BTreeMap::new();
    for r in report.restores.iter() {
        by_ns
            .entry(r.id.namespace.as_str())
            .or_default()
            .push(r.as_ref());
    }
    let mut kept = Kept::default();
    for (ns, mut restores) in by_ns {
        if restores.len() > per_namespace {
            restores.sort_by(|a, b| {
                let rank = |r: &RestoreView| (worst.get(&r.id).copied(), !r.terminal, r.created);
                rank(b)
                    .cmp(&rank(a))
                    .then_with(|| a.id.name.cmp(&b.id.name))
            });
        }
        kept.dropped
            .insert(ns, restores.len().saturating_sub(per_namespace));
        kept.left_out
            .extend(restores.iter().skip(per_namespace).map(|r| &r.id));
    }
    kept
}
