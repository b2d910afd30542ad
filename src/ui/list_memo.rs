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

/// What a restore's row was built from: the same shared restore and findings (and staleness)
/// give the same row, so a change to one restore rebuilds one row, not 1,000. The `Arc`s are
/// held, so their addresses cannot be reused meanwhile.
#[derive(Clone)]
pub struct Source {
    pub restore: Arc<RestoreView>,
    pub findings: Vec<Arc<Finding>>,
    pub stale: bool,
}

impl Source {
    /// The source of a row built now.
    pub fn new<'a>(
        restore: &Arc<RestoreView>,
        findings: impl Iterator<Item = &'a Arc<Finding>>,
        stale: bool,
    ) -> Source {
        Source {
            restore: Arc::clone(restore),
            findings: findings.cloned().collect(),
            stale,
        }
    }

    /// Whether this is exactly these.
    fn is<'a>(
        &self,
        restore: &Arc<RestoreView>,
        mut findings: impl Iterator<Item = &'a Arc<Finding>>,
        stale: bool,
    ) -> bool {
        Arc::ptr_eq(&self.restore, restore)
            && self.stale == stale
            && self
                .findings
                .iter()
                .all(|a| findings.next().is_some_and(|b| Arc::ptr_eq(a, b)))
            && findings.next().is_none()
    }
}

/// A row and what it was built from.
#[derive(Clone)]
pub struct BuiltRow {
    pub source: Source,
    pub row: Row,
}

/// The rows of the frame before, to be taken (not copied) by the rows of the next that are
/// built from the same.
#[derive(Clone, Default)]
pub struct Earlier {
    rows: Vec<Option<BuiltRow>>,
    /// Positions in `rows` by the address of their restore.
    at: HashMap<usize, usize>,
}

impl Earlier {
    /// The row built earlier from exactly these, if any: taken out, so each is used once.
    pub fn take<'a>(
        &mut self,
        restore: &Arc<RestoreView>,
        findings: impl Iterator<Item = &'a Arc<Finding>>,
        stale: bool,
    ) -> Option<BuiltRow> {
        let pos = *self.at.get(&(Arc::as_ptr(restore) as usize))?;
        let slot = self.rows.get_mut(pos)?;
        if slot
            .as_ref()
            .is_some_and(|b| b.source.is(restore, findings, stale))
        {
            slot.take()
        } else {
            None
        }
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
    /// What each of `rows` was built from.
    sources: Vec<Source>,
    /// The rows of the frame before, until this frame's are built from them.
    earlier: Option<Earlier>,
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

/// Rows and their sources, made ready to be taken by the next frame's.
fn earlier_of(rows: Vec<Row>, sources: Vec<Source>) -> Earlier {
    let at = sources
        .iter()
        .enumerate()
        .map(|(pos, s)| (Arc::as_ptr(&s.restore) as usize, pos))
        .collect();
    let rows = rows
        .into_iter()
        .zip(sources)
        .map(|(row, source)| Some(BuiltRow { source, row }))
        .collect();
    Earlier { rows, at }
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
        let earlier = match slot.take() {
            Some(Memo {
                rows: Some(rows),
                sources,
                ..
            }) => Some(earlier_of(rows, sources)),
            Some(m) => m.earlier,
            None => None,
        };
        *slot = Some(Memo {
            frame: Arc::clone(frame),
            key: key.clone(),
            order: order.clone(),
            rows: None,
            sources: Vec::new(),
            earlier,
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
        build: impl FnOnce(&mut Earlier) -> Vec<BuiltRow>,
        refresh: impl Fn(usize, &mut Row),
        f: impl FnOnce(&[Row]) -> R,
    ) -> Option<R> {
        let mut slot = self.0.borrow_mut();
        let m = slot
            .as_mut()
            .filter(|m| Arc::ptr_eq(&m.frame, frame) && m.order == order)?;
        if m.rows.is_none() {
            // Only this frame's rows are kept: the older frame's restores are let go.
            let mut earlier = m.earlier.take().unwrap_or_default();
            let (rows, sources) = build(&mut earlier)
                .into_iter()
                .map(|b| (b.row, b.source))
                .unzip();
            m.rows = Some(rows);
            m.sources = sources;
        }
        let rows = m.rows.get_or_insert_with(Vec::new);
        for (pos, row) in order.iter().zip(rows.iter_mut()) {
            refresh(*pos, row);
        }
        Some(f(rows))
    }
}
