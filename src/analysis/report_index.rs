//! Where a report's restores and each restore's findings are, per namespace: a screen asking
//! per row does not scan every finding for every restore (200 restores x 1,193 findings on a
//! real server's dump), and an incremental analysis builds the index of the namespaces it
//! redid only (with their parts), not of the whole report on each change.

use super::report::{Finding, RestoreId, RestoreView};
use super::report_order::report_order;
use std::collections::HashMap;
use std::sync::Arc;

/// One namespace's restores and the findings about each, in report order.
#[derive(Default)]
pub struct NsIndex {
    namespace: String,
    /// The namespace's restores in the order given (a part's: the report's order), so that the
    /// report's n-th restore is found by position, without hashing or comparing its name.
    restores: Vec<Arc<RestoreView>>,
    /// Per restore name: its entry in `named`.
    names: HashMap<String, u32>,
    named: Vec<Named>,
    /// For each of `restores`, its entry in `named`.
    entry_of: Vec<u32>,
    /// Findings given with this namespace that are about a restore of another one: the report
    /// index files them apart, where lookups find them.
    elsewhere: Vec<Arc<Finding>>,
}

/// What a restore name of the namespace has: the first restore of that name, and the findings
/// about it.
#[derive(Default)]
struct Named {
    restore: Option<Arc<RestoreView>>,
    findings: Vec<Arc<Finding>>,
}

impl std::fmt::Debug for NsIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "NsIndex({}: {} restores)",
            self.namespace,
            self.restores.len()
        )
    }
}

impl NsIndex {
    /// From namespace `ns`'s restores and findings (in report order, each once).
    pub fn new<'a>(
        ns: &str,
        restores: impl IntoIterator<Item = &'a Arc<RestoreView>>,
        findings: impl IntoIterator<Item = &'a Arc<Finding>>,
    ) -> NsIndex {
        let mut idx = NsIndex {
            namespace: ns.to_string(),
            ..NsIndex::default()
        };
        for r in restores {
            if r.id.namespace == ns {
                let e = idx.entry(&r.id.name);
                let named = &mut idx.named[e as usize];
                if named.restore.is_none() {
                    named.restore = Some(Arc::clone(r));
                }
                idx.restores.push(Arc::clone(r));
                idx.entry_of.push(e);
            }
        }
        for f in findings {
            match &f.restore {
                Some(id) if id.namespace == ns => {
                    let e = idx.entry(&id.name);
                    idx.named[e as usize].findings.push(Arc::clone(f));
                }
                Some(_) => idx.elsewhere.push(Arc::clone(f)),
                None => {}
            }
        }
        idx
    }

    fn entry(&mut self, name: &str) -> u32 {
        if let Some(e) = self.names.get(name) {
            return *e;
        }
        let e = u32::try_from(self.named.len()).unwrap_or(u32::MAX);
        self.names.insert(name.to_string(), e);
        self.named.push(Named::default());
        e
    }

    fn named(&self, name: &str) -> Option<&Named> {
        self.names
            .get(name)
            .and_then(|e| self.named.get(*e as usize))
    }

    /// The findings about the `slot`-th restore given, if it is `r`.
    fn findings_at(&self, slot: usize, r: &Arc<RestoreView>) -> Option<&[Arc<Finding>]> {
        let held = self.restores.get(slot)?;
        if !Arc::ptr_eq(held, r) {
            return None;
        }
        let e = *self.entry_of.get(slot)?;
        self.named.get(e as usize).map(|n| n.findings.as_slice())
    }
}

/// Built by `analysis::assemble` from the namespaces' own indexes (`NsIndex`, made with their
/// parts) and the few findings about a restore that came from elsewhere, or from scratch by
/// `Report::reindex`, which whoever changes `restores` or `findings` must call (`check -n`'s
/// scoping does). Derived data: equal for any two reports (it says nothing of its own); a
/// lookup checks what it finds, and an index not built for the report's lists is not used.
#[derive(Clone, Default)]
pub struct ReportIndex {
    built: bool,
    restores_len: usize,
    /// `FindingList::stamp` of the findings it was built with.
    findings_of: u64,
    /// Sorted by namespace.
    namespaces: Vec<Arc<NsIndex>>,
    /// Where each of `namespaces`' restores would start in the report's restores, were those
    /// the namespaces' restores one after the other (as `analysis::assemble` makes them): the
    /// n-th restore is looked for there first, by position (see `findings_at`).
    starts: Vec<usize>,
    /// Findings about a restore that its namespace's index does not hold (the cluster-wide
    /// rules'), in report order: rebuilt with each report, and few.
    others: HashMap<RestoreId, Vec<Arc<Finding>>>,
    /// `others` by the position of their restore, for those found where `starts` says.
    others_at: HashMap<usize, Vec<Arc<Finding>>>,
}

impl PartialEq for ReportIndex {
    fn eq(&self, _: &ReportIndex) -> bool {
        true
    }
}

impl Eq for ReportIndex {}

impl std::fmt::Debug for ReportIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReportIndex({} namespaces)", self.namespaces.len())
    }
}

impl ReportIndex {
    /// The index of a report with `restores_len` restores and the findings stamped `findings_of`
    /// (`FindingList::stamp`), from its namespaces' indexes (in namespace order, as the report
    /// lists their restores: a position is found by where each namespace starts) and `others`
    /// (in report order): findings about a restore that none of those holds.
    pub fn from_namespaces(
        restores_len: usize,
        findings_of: u64,
        namespaces: Vec<Arc<NsIndex>>,
        others: impl IntoIterator<Item = Arc<Finding>>,
    ) -> ReportIndex {
        // Both callers walk a map ordered by namespace. Checked in tests only: on 1,000
        // namespaces the comparisons were 7% of the pipeline's work per change (issue 28,
        // twelfth session), and sorting here could not mend an order the restores do not have.
        debug_assert!(namespaces.is_sorted_by(|a, b| a.namespace <= b.namespace));
        let mut by_restore: HashMap<RestoreId, Vec<Arc<Finding>>> = HashMap::new();
        let elsewhere = namespaces.iter().flat_map(|n| n.elsewhere.iter().cloned());
        for f in others.into_iter().chain(elsewhere) {
            if let Some(id) = &f.restore {
                by_restore.entry(id.clone()).or_default().push(f);
            }
        }
        for list in by_restore.values_mut() {
            if !list.is_sorted_by(|a, b| report_order(a, b).is_le()) {
                list.sort_by(|a, b| report_order(a, b));
            }
            // As the report's list: each finding once.
            list.dedup();
        }
        let mut starts = Vec::with_capacity(namespaces.len());
        let mut at = 0;
        for n in &namespaces {
            starts.push(at);
            at += n.restores.len();
        }
        let mut index = ReportIndex {
            built: true,
            restores_len,
            findings_of,
            namespaces,
            starts,
            others: HashMap::new(),
            others_at: HashMap::new(),
        };
        for (id, list) in &by_restore {
            for pos in index.positions(id) {
                index.others_at.insert(pos, list.clone());
            }
        }
        index.others = by_restore;
        index
    }

    /// Where the restores named `id` would be in the report's restores by `starts`.
    fn positions(&self, id: &RestoreId) -> Vec<usize> {
        let Ok(k) = self
            .namespaces
            .binary_search_by(|n| n.namespace.as_str().cmp(&id.namespace))
        else {
            return Vec::new();
        };
        let start = self.starts.get(k).copied().unwrap_or(0);
        self.namespaces[k]
            .restores
            .iter()
            .enumerate()
            .filter(|(_, r)| r.id.name == id.name)
            .map(|(slot, _)| start + slot)
            .collect()
    }

    /// Whether it was built for `restores_len` restores and the very findings stamped
    /// `findings_of`: a list changed since (`Arc::make_mut`, a new list) is not the one it filed.
    pub fn fits(&self, restores_len: usize, findings_of: u64) -> bool {
        self.built && self.restores_len == restores_len && self.findings_of == findings_of
    }

    /// Namespace `ns`'s part of the index: the same one (`Arc::ptr_eq`) in every report until
    /// a change redoes that namespace.
    pub fn of_namespace(&self, ns: &str) -> Option<&Arc<NsIndex>> {
        self.namespaces
            .binary_search_by(|n| n.namespace.as_str().cmp(ns))
            .ok()
            .map(|i| &self.namespaces[i])
    }

    fn namespace(&self, ns: &str) -> Option<&NsIndex> {
        self.of_namespace(ns).map(|n| &**n)
    }

    pub fn restore(&self, id: &RestoreId) -> Option<&Arc<RestoreView>> {
        self.namespace(&id.namespace)?
            .named(&id.name)?
            .restore
            .as_ref()
    }

    /// The findings about `id` in report order: its namespace's own, merged with the others.
    pub fn findings<'a>(&'a self, id: &RestoreId) -> Merged<'a> {
        let own = self
            .namespace(&id.namespace)
            .and_then(|n| n.named(&id.name))
            .map_or(&[][..], |n| n.findings.as_slice());
        let others = self.others.get(id).map_or(&[][..], Vec::as_slice);
        Merged { a: own, b: others }
    }

    /// The findings about `r`, the report's `pos`-th restore, found by position: no name is
    /// hashed or compared, which matters to a screen asking for each of 1,000 rows on every
    /// frame. `None` when `r` is not where `starts` says (restores given in another order):
    /// then ask `findings` by its id.
    pub fn findings_at<'a>(&'a self, pos: usize, r: &Arc<RestoreView>) -> Option<Merged<'a>> {
        let (ns, slot) = self.locate(pos)?;
        let own = ns.findings_at(slot, r)?;
        let others = if self.others_at.is_empty() {
            &[][..]
        } else {
            self.others_at.get(&pos).map_or(&[][..], Vec::as_slice)
        };
        Some(Merged { a: own, b: others })
    }

    /// The namespace index and slot where `starts` puts the `pos`-th restore.
    fn locate(&self, pos: usize) -> Option<(&Arc<NsIndex>, usize)> {
        let k = self.starts.partition_point(|s| *s <= pos).checked_sub(1)?;
        Some((self.namespaces.get(k)?, pos - self.starts.get(k)?))
    }
}

/// Where a restore's own findings are filed, told by position alone: the identity of its
/// namespace's index (the same `Arc` in every report until a change redoes that namespace) and
/// its slot there. Meaningful only while that index is held: whoever keeps one must keep the
/// report it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Filed {
    namespace: usize,
    slot: usize,
}

impl ReportIndex {
    /// Where the `pos`-th restore's findings would be filed, from the positions alone (no
    /// index is read: cheap on 1,000 rows a frame); `None` when the cluster-wide rules have
    /// findings about it too (those are rebuilt with each report). A `Filed` equal to one that
    /// `filed_checked` gave for the same restore in an earlier report (whose index is still
    /// held) means the same findings.
    pub fn filed_at(&self, pos: usize) -> Option<Filed> {
        if !self.others_at.is_empty() && self.others_at.contains_key(&pos) {
            return None;
        }
        let (ns, slot) = self.locate(pos)?;
        Some(Filed {
            namespace: Arc::as_ptr(ns) as usize,
            slot,
        })
    }

    /// `filed_at`, checked: `r` is the restore filed there.
    pub fn filed_checked(&self, pos: usize, r: &Arc<RestoreView>) -> Option<Filed> {
        let filed = self.filed_at(pos)?;
        self.findings_at(pos, r)?;
        Some(filed)
    }
}

/// Two lists in report order, walked as one, a finding in both given once.
pub struct Merged<'a> {
    a: &'a [Arc<Finding>],
    b: &'a [Arc<Finding>],
}

impl<'a> Iterator for Merged<'a> {
    type Item = &'a Arc<Finding>;

    fn next(&mut self) -> Option<&'a Arc<Finding>> {
        let take_a = match (self.a.first(), self.b.first()) {
            (None, None) => return None,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(x), Some(y)) => match report_order(x, y) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Greater => false,
                std::cmp::Ordering::Equal => {
                    self.b = &self.b[1..];
                    true
                }
            },
        };
        let (list, rest) = if take_a {
            self.a.split_first()?
        } else {
            self.b.split_first()?
        };
        if take_a {
            self.a = rest;
        } else {
            self.b = rest;
        }
        Some(list)
    }
}
