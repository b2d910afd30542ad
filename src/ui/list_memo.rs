//! The restores list as last drawn: its order and the text of its rows, kept while the frame
//! and what the operator chose (filter, sort, namespace) stay the same. The dashboard redraws
//! every second for its clock; without this, each of those redraws re-sorted and re-formatted
//! every restore (on a real server's 200 restores and 1,200 findings, most of an idle core's
//! use). Only the cells that read the clock (age, deadline, stale for) are redone per draw.

use super::sort::Sort;
use super::views::common::Row;
use crate::analysis::{Filed, Finding, Report, RestoreView, Severity};
use crate::pipeline::frame::Frame;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// Hashes an address of a live `Arc` (the keys below): addresses are unique while held, so a
/// multiply that carries the high bits down spreads them; SipHash's defence against chosen
/// keys buys nothing here, and on 1,000 restores its rounds were a visible share of each new
/// frame's update (issue 28, sixth session).
#[derive(Default, Clone, Copy)]
pub struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(self.0.rotate_left(8) ^ u64::from(*b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        let x = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // The low bits of an aligned address are always zero; the table indexes by low bits.
        self.0 = x ^ (x >> 29);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// A map keyed by the address of a held `Arc`.
pub type ByAddr<V> = HashMap<usize, V, BuildHasherDefault<AddrHasher>>;

/// What a restore's row was built from: the same shared restore and findings (and staleness)
/// give the same row, so a change to one restore rebuilds one row, not 1,000. The `Arc`s are
/// held, so their addresses cannot be reused meanwhile.
#[derive(Clone)]
pub struct Source {
    pub restore: Arc<RestoreView>,
    pub findings: Vec<Arc<Finding>>,
    /// Where the report filed those findings (see `Filed`): an equal place in the next report
    /// means the same findings, told without reading them.
    pub filed: Option<Filed>,
    /// The restore's own staleness (kept: reading it again means reading the restore).
    pub restore_stale: bool,
    /// Drawn stale: the restore's own, or its kind's in the snapshot.
    pub stale: bool,
}

impl Source {
    /// The source of the row of the report's `pos`-th restore, built now.
    pub fn new(
        report: &Report,
        pos: usize,
        restore: &Arc<RestoreView>,
        stale_kind: bool,
    ) -> Source {
        Source {
            restore: Arc::clone(restore),
            findings: report.finding_arcs_at(pos).cloned().collect(),
            filed: report.filed_checked(pos),
            restore_stale: restore.stale,
            stale: restore.stale || stale_kind,
        }
    }

    /// Whether this is exactly what the report's `pos`-th restore, `restore`, has.
    fn is(
        &self,
        report: &Report,
        pos: usize,
        restore: &Arc<RestoreView>,
        stale_kind: bool,
    ) -> bool {
        if !Arc::ptr_eq(&self.restore, restore) || self.stale != (self.restore_stale || stale_kind)
        {
            return false;
        }
        if self.filed.is_some() && self.filed == report.filed_at(pos) {
            return true;
        }
        let mut findings = report.finding_arcs_at(pos);
        self.findings
            .iter()
            .all(|a| findings.next().is_some_and(|b| Arc::ptr_eq(a, b)))
            && findings.next().is_none()
    }
}

/// What the cells of a row that read the clock were last drawn for: the UI's clock and when
/// the data began to be stale (`select::stale_since`). With the row's restore the same, equal
/// stamps mean equal cells.
pub type ClockStamp = (jiff::Timestamp, Option<jiff::Timestamp>);

/// A row, what it was built from, the display width of its cells as built, and what its
/// clock cells were last drawn for.
#[derive(Clone)]
pub struct BuiltRow {
    pub source: Source,
    pub row: Row,
    widths: Box<[usize]>,
    clock: Option<ClockStamp>,
}

impl BuiltRow {
    pub fn new(source: Source, row: Row) -> BuiltRow {
        let widths = super::views::common::cell_widths(&row);
        BuiltRow {
            source,
            row,
            widths,
            clock: None,
        }
    }
}

/// The rows of the frame before, as they were drawn (in the order they were drawn in), until
/// the next frame's rows are made from them: kept in place when that frame lists the same
/// positions, taken one by one otherwise.
#[derive(Clone, Default)]
pub struct Earlier {
    /// Held, never read: the rows' `Filed` places are in its report's index, which must not
    /// be freed (and its address reused) while they are compared.
    _frame: Option<Arc<Frame>>,
    /// Positions in the frame before's restores, in the order its rows were drawn.
    order: Vec<usize>,
    columns: Columns,
    /// Rows not taken or replaced, let go once the frame is on screen (`release_retired`).
    left: Vec<Option<BuiltRow>>,
}

/// A frame's rows in the list's order, column by column.
#[derive(Clone, Default)]
struct Columns {
    /// The rows, clock-dependent cells as last drawn.
    rows: Vec<Row>,
    /// What each row was built from.
    sources: Vec<Source>,
    /// The display width of each row's cells as built (`common::cell_widths`): a row kept
    /// from the frame before keeps them, so a new frame measures only the rows it built.
    widths: Vec<Box<[usize]>>,
    /// What each row's clock cells were last drawn for (`None`: not since it was built).
    clocks: Vec<Option<ClockStamp>>,
    /// The widest of `widths`: the clock refreshes only cells of fixed width, so what sizes
    /// the other columns does not move until a row is built again.
    widest: Vec<usize>,
}

impl Earlier {
    /// The rows for the report's restores at `order`: each kept if built from exactly what
    /// that restore has now, else made by `make`. When the frame before drew the same
    /// positions in the same order (a change that moved no restore: most of them), the rows
    /// stay where they are and only those built from something else are made again; on 1,000
    /// restores, moving every row into a new list and back was most of a new frame's cost
    /// (issue 28, sixteenth session).
    fn rows_for(
        &mut self,
        report: &Report,
        order: &[usize],
        stale_kind: bool,
        make: impl Fn(usize, &Arc<RestoreView>) -> BuiltRow,
    ) -> Columns {
        let in_place = self.order == order
            && self.columns.rows.len() == order.len()
            && order.iter().all(|&pos| pos < report.restores.len());
        if !in_place {
            return self.taken_for(report, order, stale_kind, make);
        }
        let mut out = std::mem::take(&mut self.columns);
        // The widest cells are measured again only when a row was replaced.
        let mut recount = out.widest.is_empty() && !out.widths.is_empty();
        for (i, &pos) in order.iter().enumerate() {
            let (Some(restore), Some(source)) = (report.restores.get(pos), out.sources.get_mut(i))
            else {
                continue;
            };
            if source.is(report, pos, restore, stale_kind) {
                // As `take` does: filed where this report files it.
                if source.filed != report.filed_at(pos) {
                    source.filed = report.filed_checked(pos);
                }
                continue;
            }
            let b = make(pos, restore);
            let old = BuiltRow {
                source: std::mem::replace(source, b.source),
                row: std::mem::replace(&mut out.rows[i], b.row),
                widths: std::mem::replace(&mut out.widths[i], b.widths),
                clock: std::mem::replace(&mut out.clocks[i], b.clock),
            };
            recount = true;
            self.left.push(Some(old));
        }
        if recount {
            out.widest = super::views::common::widest_of(out.widths.iter().map(|w| &**w));
        }
        out
    }

    /// `rows_for` when the rows moved: each found by its restore (`take`) or made.
    fn taken_for(
        &mut self,
        report: &Report,
        order: &[usize],
        stale_kind: bool,
        make: impl Fn(usize, &Arc<RestoreView>) -> BuiltRow,
    ) -> Columns {
        let mut by_pos = Vec::new();
        let was = std::mem::take(&mut self.columns);
        for (row, (&pos, s)) in self.order.iter().zip(&was.sources).enumerate() {
            if by_pos.len() <= pos {
                by_pos.resize(pos + 1, None);
            }
            by_pos[pos] = Some(RowAt {
                addr: Arc::as_ptr(&s.restore) as usize,
                row,
            });
        }
        let mut at = Positional::new(by_pos);
        self.left = was
            .rows
            .into_iter()
            .zip(was.sources)
            .zip(was.widths)
            .zip(was.clocks)
            .map(|(((row, source), widths), clock)| {
                Some(BuiltRow {
                    source,
                    row,
                    widths,
                    clock,
                })
            })
            .collect();
        let n = order.len();
        let mut out = Columns {
            rows: Vec::with_capacity(n),
            sources: Vec::with_capacity(n),
            widths: Vec::with_capacity(n),
            clocks: Vec::with_capacity(n),
            widest: Vec::new(),
        };
        for &pos in order {
            let Some(restore) = report.restores.get(pos) else {
                continue;
            };
            let b = take(&mut self.left, &mut at, report, pos, restore, stale_kind)
                .unwrap_or_else(|| make(pos, restore));
            out.rows.push(b.row);
            out.sources.push(b.source);
            out.widths.push(b.widths);
            out.clocks.push(b.clock);
        }
        out.widest = super::views::common::widest_of(out.widths.iter().map(|w| &**w));
        out
    }
}

/// The row built earlier from exactly what the report's `pos`-th restore, `restore`, has now,
/// if any: taken out of `rows` (found through `at`), so each is used once.
fn take(
    rows: &mut [Option<BuiltRow>],
    at: &mut Positional<RowAt>,
    report: &Report,
    pos: usize,
    restore: &Arc<RestoreView>,
    stale_kind: bool,
) -> Option<BuiltRow> {
    let at = at.find(pos, Arc::as_ptr(restore) as usize)?;
    let slot = rows.get_mut(at.row)?;
    if !slot
        .as_ref()
        .is_some_and(|b| b.source.is(report, pos, restore, stale_kind))
    {
        return None;
    }
    let mut b = slot.take()?;
    // Told the same by its findings, not by where they are filed: the place it was built
    // with is in a report no longer held (its index may be freed, and a new one made at
    // that address would pass for it), so the row is filed where this report files it.
    if b.source.filed != report.filed_at(pos) {
        b.source.filed = report.filed_checked(pos);
    }
    Some(b)
}

/// Values made for the restores of the frame before, each knowing the address of its
/// restore, found for a restore of the next frame by its position there first: a change redoes
/// one namespace's restores and leaves the others where they were, so on 1,000 restores a
/// lookup by address per restore (a hash and a likely cache miss each) was most of the cost
/// (issue 28, twelfth session). The restores that moved are found by address, in a map made at
/// the first one.
#[derive(Clone)]
struct Positional<V> {
    by_pos: Vec<Option<V>>,
    moved: Option<ByAddr<V>>,
}

/// A value made for one restore, which it names by its address.
trait OfRestore: Copy {
    fn addr(&self) -> usize;
}

impl<V> Default for Positional<V> {
    fn default() -> Self {
        Positional {
            by_pos: Vec::new(),
            moved: None,
        }
    }
}

impl<V: OfRestore> Positional<V> {
    fn new(by_pos: Vec<Option<V>>) -> Self {
        Positional {
            by_pos,
            moved: None,
        }
    }

    /// What was made for the restore at `addr`, now at `pos`.
    fn find(&mut self, pos: usize, addr: usize) -> Option<V> {
        if let Some(Some(v)) = self.by_pos.get(pos)
            && v.addr() == addr
        {
            return Some(*v);
        }
        let by_pos = &self.by_pos;
        self.moved
            .get_or_insert_with(|| by_pos.iter().flatten().map(|v| (v.addr(), *v)).collect())
            .get(&addr)
            .copied()
    }
}

/// Where a row of the frame before is among `Earlier`'s rows.
#[derive(Clone, Copy)]
struct RowAt {
    addr: usize,
    row: usize,
}

impl OfRestore for RowAt {
    fn addr(&self) -> usize {
        self.addr
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
    /// The rows of `order`, once drawn.
    built: Option<Columns>,
    /// The rows of the frame before, until this frame's are built from them.
    earlier: Option<Earlier>,
    /// The order's keys for this frame, by position in its restores.
    keys: Vec<Option<Keyed>>,
}

/// One per `App`; interior mutability because drawing reads the app immutably.
#[derive(Clone, Default)]
pub struct ListMemo(RefCell<Option<Memo>>, RefCell<Option<Earlier>>);

impl std::fmt::Debug for ListMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.borrow().as_ref().map_or(0, |m| m.order.len());
        write!(f, "ListMemo({n} restores)")
    }
}

/// Rows and their sources (made for `frame`, in `order`), ready for the next frame's.
fn earlier_of(frame: Arc<Frame>, order: Vec<usize>, columns: Columns) -> Earlier {
    Earlier {
        _frame: Some(frame),
        order,
        columns,
        left: Vec::new(),
    }
}

/// What the list's order reads of a restore: its worst severity among warnings and errors and
/// how many findings have it, and whether it finished.
pub type RowKey = (std::cmp::Reverse<(Option<Severity>, usize)>, bool);

/// A restore's `RowKey` as computed for a frame: the restore's address, where its findings
/// were filed (see `Filed`), and the key.
#[derive(Clone, Copy)]
pub struct Keyed {
    addr: usize,
    filed: Filed,
    key: RowKey,
}

impl OfRestore for Keyed {
    fn addr(&self) -> usize {
        self.addr
    }
}

/// Each restore's `RowKey` as computed for the frame before, with where its findings were
/// filed: a restore whose findings are filed in the same place keeps its key, without its
/// findings (or itself) being read again. Found by position (`Positional`).
#[derive(Clone, Default)]
pub struct KeyCache {
    /// Held: the `Filed` places of `before` are in its report's index.
    frame: Option<Arc<Frame>>,
    before: Positional<Keyed>,
    now: Vec<Option<Keyed>>,
}

impl KeyCache {
    /// The key of the report's `pos`-th restore: remembered, or made by `compute`.
    pub fn key(&mut self, report: &Report, pos: usize, compute: impl FnOnce() -> RowKey) -> RowKey {
        let Some(r) = report.restores.get(pos) else {
            return compute();
        };
        let addr = Arc::as_ptr(r) as usize;
        if let Some(filed) = report.filed_at(pos)
            && let Some(was) = self.before.find(pos, addr)
            && was.filed == filed
        {
            self.remember(pos, was);
            return was.key;
        }
        let key = compute();
        if let Some(filed) = report.filed_checked(pos) {
            self.remember(pos, Keyed { addr, filed, key });
        }
        key
    }

    fn remember(&mut self, pos: usize, k: Keyed) {
        if self.now.len() <= pos {
            self.now.resize(pos + 1, None);
        }
        self.now[pos] = Some(k);
    }
}

/// Whether `order` (made for the report `was`, with `keys`) is the order of `now` as well: the
/// same restores at the same positions, and each one listed with its findings filed in the
/// same place. The filter, scope and columns read only a restore itself, and the key its
/// findings, so then nothing the order reads changed (a change elsewhere in the cluster, or to
/// a restore's objects that left its row as it was).
fn same_order_inputs(was: &Report, now: &Report, order: &[usize], keys: &[Option<Keyed>]) -> bool {
    was.restores.len() == now.restores.len()
        && was
            .restores
            .iter()
            .zip(now.restores.iter())
            .all(|(a, b)| Arc::ptr_eq(a, b))
        && order
            .iter()
            .all(|&pos| keys.get(pos).is_some_and(Option::is_some))
        // Every key kept, listed or not, is checked: a key is carried to the next frame only
        // filed where that frame files it (a place in a report let go could pass for another).
        && keys
            .iter()
            .enumerate()
            .all(|(pos, k)| k.is_none_or(|k| now.filed_at(pos) == Some(k.filed)))
}

impl ListMemo {
    /// The order for `frame` and `key`, computed by `compute` unless remembered.
    pub fn order(
        &self,
        frame: &Arc<Frame>,
        key: &OrderKey,
        compute: impl FnOnce(&mut KeyCache) -> Vec<usize>,
    ) -> Vec<usize> {
        if let Some(m) = self.0.borrow().as_ref()
            && Arc::ptr_eq(&m.frame, frame)
            && &m.key == key
        {
            return m.order.clone();
        }
        let mut old = self.0.borrow_mut().take();
        let reused = old.as_mut().and_then(|m| {
            (m.key == *key && same_order_inputs(&m.frame.report, &frame.report, &m.order, &m.keys))
                .then(|| (m.order.clone(), std::mem::take(&mut m.keys)))
        });
        let (order, keys) = match reused {
            Some(same) => same,
            None => {
                let mut cache = match &mut old {
                    Some(m) => KeyCache {
                        frame: Some(Arc::clone(&m.frame)),
                        before: Positional::new(std::mem::take(&mut m.keys)),
                        now: Vec::with_capacity(frame.report.restores.len()),
                    },
                    None => KeyCache::default(),
                };
                let order = compute(&mut cache);
                // The frame before is let go only now that nothing compares with its index.
                drop(cache.frame.take());
                (order, cache.now)
            }
        };
        let earlier = match old {
            Some(Memo {
                frame,
                order: was,
                built: Some(columns),
                ..
            }) => Some(earlier_of(frame, was, columns)),
            Some(m) => m.earlier,
            None => None,
        };
        *self.0.borrow_mut() = Some(Memo {
            frame: Arc::clone(frame),
            key: key.clone(),
            order: order.clone(),
            built: None,
            earlier,
            keys,
        });
        order
    }

    /// Lets go of what the last draw left over (the rows and frame before): called once the
    /// frame is on screen.
    pub fn release_retired(&self) {
        drop(self.1.borrow_mut().take());
    }

    /// Runs `f` on the rows of the remembered order (the frame before's rows where they were
    /// built from what the same restore has now, else made by `make`: see `Earlier`), after
    /// `refresh` redid the clock-dependent cells of the rows in `visible` (the window drawn:
    /// those cells have fixed-width columns, so the rows not drawn need not read the clock;
    /// on 1,000 rows that was a thousand ages formatted per clock move) whose cells were last
    /// drawn for another `clock` (a row kept from the frame before keeps its stamp: on a new
    /// frame within the same second, only the rows built anew format their ages). `None` when
    /// `order` was not the last one asked for (then nothing is remembered for it).
    /// `stale_kind`: whether the snapshot shows the restores' kind stale (every row then is).
    #[allow(clippy::too_many_arguments)]
    pub fn with_rows<R>(
        &self,
        frame: &Arc<Frame>,
        order: &[usize],
        visible: std::ops::Range<usize>,
        clock: ClockStamp,
        stale_kind: bool,
        make: impl Fn(usize, &Arc<RestoreView>) -> BuiltRow,
        refresh: impl Fn(usize, &mut Row),
        f: impl FnOnce(&[Row], &[usize]) -> R,
    ) -> Option<R> {
        let mut slot = self.0.borrow_mut();
        let m = slot
            .as_mut()
            .filter(|m| Arc::ptr_eq(&m.frame, frame) && m.order == order)?;
        if m.built.is_none() {
            // Only this frame's rows are kept: what the frame before left (its frame, the rows
            // no restore took) is let go after the frame is on screen (`release_retired`): the
            // last reference to the frame before is usually this one, and freeing its report
            // is a walk over every restore and finding it held, on the way to the screen.
            let mut earlier = m.earlier.take().unwrap_or_default();
            let built = earlier.rows_for(&frame.report, order, stale_kind, make);
            *self.1.borrow_mut() = Some(earlier);
            m.built = Some(built);
        }
        let Columns {
            rows,
            clocks,
            widest,
            ..
        } = m.built.get_or_insert_with(Columns::default);
        clocks.resize(rows.len(), None);
        let (from, to) = (visible.start, visible.end.min(rows.len()));
        for ((pos, row), drawn_for) in order
            .iter()
            .zip(rows.iter_mut())
            .zip(clocks.iter_mut())
            .take(to)
            .skip(from)
        {
            if *drawn_for != Some(clock) {
                refresh(*pos, row);
                *drawn_for = Some(clock);
            }
        }
        Some(f(rows, widest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn aligned_addresses_spread_over_a_tables_low_bits() {
        // 1,024 restores 64 bytes apart, as an allocator lays them out: a table of 1,024
        // buckets indexes by the hash's low 10 bits, which must not all be the same few.
        let build = BuildHasherDefault::<AddrHasher>::default();
        let buckets: std::collections::HashSet<u64> = (0..1024u64)
            .map(|k| build.hash_one(0x7f00_0000_0000 + k * 64) & 1023)
            .collect();
        assert!(buckets.len() > 600, "{} buckets of 1024", buckets.len());
    }

    #[test]
    fn a_restore_is_found_at_its_position_or_by_its_address_once_moved() {
        let at = |addr, row| Some(RowAt { addr, row });
        let mut p = Positional::new(vec![at(100, 0), None, at(300, 1)]);
        assert_eq!(p.find(0, 100).map(|r| r.row), Some(0));
        // Another restore now at position 0: not the one made there.
        assert!(p.find(0, 200).is_none());
        // The restore at 300 moved to position 1 (one before it was removed).
        assert_eq!(p.find(1, 300).map(|r| r.row), Some(1));
        assert!(p.find(5, 999).is_none());
    }
}
