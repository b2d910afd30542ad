//! The restores list as last drawn: its order and the text of its rows, kept while the frame
//! and what the operator chose (filter, sort, namespace) stay the same. The dashboard redraws
//! every second for its clock; without this, each of those redraws re-sorted and re-formatted
//! every restore (on a real server's 200 restores and 1,200 findings, most of an idle core's
//! use). Only the cells that read the clock (age, deadline, stale for) are redone per draw.

use super::sort::Sort;
use super::views::common::Row;
use crate::pipeline::frame::Frame;
use std::cell::RefCell;
use std::sync::Arc;

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
        *self.0.borrow_mut() = Some(Memo {
            frame: Arc::clone(frame),
            key: key.clone(),
            order: order.clone(),
            rows: None,
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
        build: impl FnOnce() -> Vec<Row>,
        refresh: impl Fn(usize, &mut Row),
        f: impl FnOnce(&[Row]) -> R,
    ) -> Option<R> {
        let mut slot = self.0.borrow_mut();
        let m = slot
            .as_mut()
            .filter(|m| Arc::ptr_eq(&m.frame, frame) && m.order == order)?;
        let rows = m.rows.get_or_insert_with(build);
        for (pos, row) in order.iter().zip(rows.iter_mut()) {
            refresh(*pos, row);
        }
        Some(f(rows))
    }
}
