//! The order of a report's findings, and how a report reaches it from runs kept sorted per
//! namespace: an incremental analysis merges the namespaces' sorted findings with the few
//! cluster-wide ones instead of sorting every finding again on each change (1,193 on a real
//! server's dump, 9% of the CPU of a write before).

use super::report::Finding;
use std::cmp::Ordering;
use std::sync::Arc;

/// Most severe first; a restore's findings before the cluster-wide ones, by restore, code and
/// objects. Total (the text decides the rest), so that one sort and a merge of sorted runs give
/// the same list, and equal findings always end up side by side, where `dedup` drops them.
pub fn report_order(a: &Finding, b: &Finding) -> Ordering {
    b.severity
        .cmp(&a.severity)
        .then_with(|| a.restore.is_none().cmp(&b.restore.is_none()))
        .then_with(|| a.restore.cmp(&b.restore))
        .then_with(|| a.code.as_str().cmp(b.code.as_str()))
        .then_with(|| a.objects.cmp(&b.objects))
        .then_with(|| a.message.cmp(&b.message))
        .then_with(|| a.remedy.cmp(&b.remedy))
        .then_with(|| a.action.cmp(&b.action))
        .then_with(|| a.stale.cmp(&b.stale))
}

/// `findings` in report order, each once.
pub fn sorted(mut findings: Vec<Arc<Finding>>) -> Vec<Arc<Finding>> {
    findings.sort_by(|a, b| report_order(a, b));
    findings.dedup();
    findings
}

/// What decides a finding's place first: its severity and whether it is about a restore.
/// Within one such bucket, findings about restores are ordered by restore, so the runs of
/// namespaces given in namespace order follow one another.
fn bucket(f: &Finding) -> (std::cmp::Reverse<super::Severity>, bool) {
    (std::cmp::Reverse(f.severity), f.restore.is_none())
}

/// One list in report order, each finding once, from `runs` (each in report order; expected to
/// be the namespaces' findings in namespace order, which then only need putting end to end per
/// bucket) and `others` (in report order, merged in wherever they fall: the cluster-wide
/// findings). Runs that do not follow one another as expected are sorted: the result is the
/// same as `sorted` of everything, only cheaper when the runs are as expected.
pub fn merge(runs: &[&[Arc<Finding>]], others: &[Arc<Finding>]) -> Vec<Arc<Finding>> {
    let total = runs.iter().map(|r| r.len()).sum::<usize>() + others.len();
    let mut segments: Vec<&[Arc<Finding>]> = Vec::new();
    for run in runs {
        let mut rest = *run;
        while let Some(first) = rest.first() {
            let key = bucket(first);
            let n = rest.iter().take_while(|f| bucket(f) == key).count();
            let (seg, tail) = rest.split_at(n);
            segments.push(seg);
            rest = tail;
        }
    }
    // Stable: within a bucket the runs keep their order.
    segments.sort_by_key(|s| bucket(&s[0]));
    let mut out: Vec<Arc<Finding>> = Vec::with_capacity(total);
    let mut joined: Vec<Arc<Finding>> = Vec::new();
    let mut others = others;
    let mut i = 0;
    while i < segments.len() {
        let key = bucket(&segments[i][0]);
        joined.clear();
        let mut in_order = true;
        while let Some(seg) = segments.get(i).filter(|s| bucket(&s[0]) == key) {
            if let (Some(last), Some(first)) = (joined.last(), seg.first()) {
                in_order &= report_order(last, first) == Ordering::Less;
            }
            joined.extend(seg.iter().cloned());
            i += 1;
        }
        if !in_order {
            joined.sort_by(|a, b| report_order(a, b));
        }
        // The others that come before this bucket, then those inside it.
        let before = others.partition_point(|f| bucket(f) < key);
        out.extend(others[..before].iter().cloned());
        others = &others[before..];
        let inside = others.partition_point(|f| bucket(f) == key);
        merge_two(&joined, &others[..inside], &mut out);
        others = &others[inside..];
    }
    out.extend(others.iter().cloned());
    out.dedup();
    out
}

/// Appends `a` and `b`, each in report order, in report order.
fn merge_two(a: &[Arc<Finding>], b: &[Arc<Finding>], out: &mut Vec<Arc<Finding>>) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if report_order(&a[i], &b[j]) != Ordering::Greater {
            out.push(Arc::clone(&a[i]));
            i += 1;
        } else {
            out.push(Arc::clone(&b[j]));
            j += 1;
        }
    }
    out.extend(a[i..].iter().cloned());
    out.extend(b[j..].iter().cloned());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{Code, ObjRef, RestoreId, Severity};
    use crate::model::Kind;
    use proptest::prelude::*;

    fn finding(sev: u8, restore: Option<(u8, u8)>, code: u8, obj: u8, text: u8) -> Finding {
        let codes = [
            Code::RestoreStalled,
            Code::OrigPvcForeign,
            Code::ConcurrentRestores,
        ];
        let sevs = [Severity::Info, Severity::Warning, Severity::Error];
        Finding {
            code: codes[code as usize % codes.len()],
            severity: sevs[sev as usize % sevs.len()],
            restore: restore.map(|(ns, r)| RestoreId {
                namespace: format!("ns-{}", ns % 6),
                name: format!("r-{}", r % 3),
            }),
            objects: vec![ObjRef::new(
                Kind::PersistentVolumeClaim,
                "ns",
                format!("pvc-{}", obj % 3),
            )],
            message: format!("m{}", text % 2),
            remedy: String::new(),
            action: None,
            stale: false,
        }
    }

    fn arb_finding() -> impl Strategy<Value = Finding> {
        (
            any::<u8>(),
            proptest::option::of((any::<u8>(), any::<u8>())),
            any::<u8>(),
            any::<u8>(),
            any::<u8>(),
        )
            .prop_map(|(s, r, c, o, t)| finding(s, r, c, o, t))
    }

    proptest! {
        /// Whatever the runs hold (namespaces out of order, one namespace's findings split
        /// over several runs, duplicates across runs and others), the merge is the sort.
        #[test]
        fn merging_runs_gives_what_sorting_everything_gives(
            runs in proptest::collection::vec(proptest::collection::vec(arb_finding(), 0..12), 0..8),
            others in proptest::collection::vec(arb_finding(), 0..10),
        ) {
            let runs: Vec<Vec<Arc<Finding>>> = runs
                .into_iter()
                .map(|r| sorted(r.into_iter().map(Arc::new).collect()))
                .collect();
            let others = sorted(others.into_iter().map(Arc::new).collect());
            let all: Vec<Arc<Finding>> = runs.iter().flatten().chain(&others).cloned().collect();
            let slices: Vec<&[Arc<Finding>]> = runs.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(merge(&slices, &others), sorted(all));
        }
    }

    #[test]
    fn namespaces_in_order_are_put_end_to_end_and_the_cluster_wide_ones_merged_in() {
        let a = sorted(vec![
            Arc::new(finding(2, Some((1, 0)), 0, 0, 0)),
            Arc::new(finding(1, Some((1, 1)), 1, 0, 0)),
        ]);
        let b = sorted(vec![Arc::new(finding(2, Some((2, 0)), 0, 0, 0))]);
        let others = sorted(vec![
            Arc::new(finding(2, None, 2, 0, 0)),
            Arc::new(finding(2, Some((1, 2)), 2, 0, 0)),
            Arc::new(finding(1, Some((1, 1)), 1, 0, 0)),
        ]);
        let merged = merge(&[&a, &b], &others);
        let names: Vec<String> = merged
            .iter()
            .map(|f| {
                format!(
                    "{:?} {:?}",
                    f.severity,
                    f.restore.as_ref().map(|r| r.to_string())
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                "Error Some(\"ns-1/r-0\")",
                "Error Some(\"ns-1/r-2\")",
                "Error Some(\"ns-2/r-0\")",
                "Error None",
                "Warning Some(\"ns-1/r-1\")",
            ],
            "the duplicate of ns-1/r-1's warning is dropped"
        );
    }
}
