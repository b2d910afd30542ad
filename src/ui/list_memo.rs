//! The restores list as last drawn: its order and the text of its rows, kept while the frame
//! and what the operator chose (filter, sort, namespace) stay the same. The dashboard redraws
//! every second for its clock; without this, each of those redraws re-sorted and re-formatted
//! every restore (on a real server's 200 restores and 1,200 findings, most of an idle core's
//! use). Only the cells that read the clock (age, deadline, stale for) are redone per draw.

use super::sort::Sort;
use super::views::common::Row;
use crate::analysis::{Finding, RestoreView};
use crate::pipeline::frame::Frame;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// A restore's row as built for an earlier frame, with what it was built from: the same shared
/// restore and findings (and staleness) give the same row, so a change to one restore rebuilds
/// one row, not 200. The `Arc`s are held, so their addresses cannot be reused meanwhile.
#[derive(Clone)]
pub struct BuiltRow {
    pub restore: Arc<RestoreView>,
    pub findings: Vec<Arc<Finding>>,
    pub stale: bool,
    pub row: Row,
}

impl BuiltRow {
    /// Whether this row was built from exactly these.
    pub fn built_from(
        &self,
        restore: &Arc<RestoreView>,
        findings: &[&Arc<Finding>],
        stale: bool,
    ) -> bool {
        Arc::ptr_eq(&self.restore, restore)
            && self.stale == stale
            && self.findings.len() == findings.len()
            && self
                .findings
                .iter()
                .zip(findings)
                .all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

/// What the order depends on besides the frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderKey {
    pub filter: String,
    pub namespace: Option<String>,
    pub sort: Option<Sort>,
}

#[derive(Clone)]
struct Memo {
    /// Held, so that no later frame can be mistaken for it (`Arc::ptr_eq`).
    frame: Arc<Frame>,
    key: OrderKey,
    /// Positions in `frame.report.restores`, in the list's order.
    order: Vec<usize>,
    /// The rows of `order`, clock-dependent cells as last drawn.
    rows: Option<Vec<Row>>,
    /// Rows by the address of their restore, from this frame or the one before.
    built: HashMap<usize, BuiltRow>,
}

/// One per `App`; interior mutability because drawing reads the app immutably.
#[derive(Clone, Default)]
pub struct ListMemo(RefCell<Option<Memo>>);

impl std::fmt::Debug for ListMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.borrow().as_ref().map_or(0, |m| m.order.len());
        write!(f, "ListMemo({n} restores)")
    }
}

impl ListMemo {
    /// The order for `frame` and `key`, computed by `compute` unless remembered.
    pub fn order(
        &self,
        frame: &Arc<Frame>,
        key: &OrderKey,
        compute: impl FnOnce() -> Vec<usize>,
    ) -> Vec<usize> {
        if let Some(m) = self.0.borrow().as_ref()
            && Arc::ptr_eq(&m.frame, frame)
            && &m.key == key
        {
            return m.order.clone();
        }
        let order = compute();
        let mut slot = self.0.borrow_mut();
        let built = slot.take().map(|m| m.built).unwrap_or_default();
        *slot = Some(Memo {
            frame: Arc::clone(frame),
            key: key.clone(),
            order: order.clone(),
            rows: None,
            built,
        });
        order
    }

    /// Runs `f` on the rows of the remembered order (built by `build` the first time), after
    /// `refresh` redid each row's clock-dependent cells. `None` when `order` was not the last
    /// one asked for (then nothing is remembered for it).
    pub fn with_rows<R>(
        &self,
        frame: &Arc<Frame>,
        order: &[usize],
        build: impl FnOnce(&HashMap<usize, BuiltRow>) -> Vec<BuiltRow>,
        refresh: impl Fn(usize, &mut Row),
        f: impl FnOnce(&[Row]) -> R,
    ) -> Option<R> {
        let mut slot = self.0.borrow_mut();
        let m = slot
            .as_mut()
            .filter(|m| Arc::ptr_eq(&m.frame, frame) && m.order == order)?;
        if m.rows.is_none() {
            let built = build(&m.built);
            m.rows = Some(built.iter().map(|b| b.row.clone()).collect());
            // Only this frame's rows are kept: the older frame's restores are let go.
            m.built = built
                .into_iter()
                .map(|b| (Arc::as_ptr(&b.restore) as usize, b))
                .collect();
        }
        let rows = m.rows.get_or_insert_with(Vec::new);
        for (pos, row) in order.iter().zip(rows.iter_mut()) {
            refresh(*pos, row);
        }
        Some(f(rows))
    }
}
