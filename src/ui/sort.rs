//! Sorting the tables by a column, k9s style: `Shift`+letter sorts by that column, the same
//! key again reverses. Pure: `select` builds each row's key with typed values (ages as times,
//! sizes as bytes), never by parsing what is drawn.

use super::keys::ScreenKind;
use std::cmp::Ordering;

/// A column a table can be sorted by. Which tables have which is `SortCol::screens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SortCol {
    /// Worst news first: by the worst finding's severity (the restores list's default), or a
    /// finding's own severity.
    Findings,
    Name,
    Namespace,
    Age,
    Status,
    Target,
    Deadline,
    Code,
    Restore,
    Size,
}

impl SortCol {
    /// The name used in `[keys]` of the config file, after `sort-`.
    pub fn name(self) -> &'static str {
        match self {
            SortCol::Findings => "sort-findings",
            SortCol::Name => "sort-name",
            SortCol::Namespace => "sort-namespace",
            SortCol::Age => "sort-age",
            SortCol::Status => "sort-status",
            SortCol::Target => "sort-target",
            SortCol::Deadline => "sort-deadline",
            SortCol::Code => "sort-code",
            SortCol::Restore => "sort-restore",
            SortCol::Size => "sort-size",
        }
    }

    /// The tables that have this column.
    pub const fn screens(self) -> &'static [ScreenKind] {
        use ScreenKind as S;
        match self {
            SortCol::Findings => &[S::Restores, S::Findings],
            SortCol::Name | SortCol::Namespace => &[S::Restores, S::Orig],
            SortCol::Age => &[S::Restores, S::Orig, S::Events],
            SortCol::Status | SortCol::Target | SortCol::Deadline => &[S::Restores],
            SortCol::Code => &[S::Findings],
            SortCol::Restore => &[S::Findings, S::Orig, S::Events],
            SortCol::Size => &[S::Orig],
        }
    }

    /// Where the first press puts the rows: the order an operator wants first. Worst
    /// findings, the newest, the least time left and the biggest come first; names A to Z.
    fn first_descending(self) -> bool {
        matches!(self, SortCol::Findings | SortCol::Size)
    }
}

/// The order of one table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sort {
    pub col: SortCol,
    /// The second press of the same key: the other way round.
    pub reversed: bool,
}

impl Sort {
    pub const fn by(col: SortCol) -> Sort {
        Sort {
            col,
            reversed: false,
        }
    }

    /// The order a table opens with.
    pub fn default_for(screen: ScreenKind) -> Option<Sort> {
        match screen {
            ScreenKind::Restores | ScreenKind::Findings => Some(Sort::by(SortCol::Findings)),
            ScreenKind::Orig => Some(Sort::by(SortCol::Namespace)),
            ScreenKind::Events => Some(Sort::by(SortCol::Age)),
            _ => None,
        }
    }

    /// The effect of pressing `col`'s key on a table sorted `self`.
    pub fn pressed(self, col: SortCol) -> Sort {
        if self.col == col {
            Sort {
                col,
                reversed: !self.reversed,
            }
        } else {
            Sort::by(col)
        }
    }

    /// Whether the values of the column descend down the table, for the header's arrow.
    pub fn descending(self) -> bool {
        self.col.first_descending() != self.reversed
    }

    /// `↓` or `↑`, drawn after the column title.
    pub fn arrow(self) -> &'static str {
        if self.descending() { "↓" } else { "↑" }
    }
}

/// A row's value in the sorted column. Missing values sort last whichever the direction, so
/// reversing never floods the top with `-`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    Num(i128),
    Text(String),
}

/// Sorts `rows` by `key` in `sort`'s direction. Stable: rows that compare equal keep the order
/// they came in (each table's default order).
pub fn apply<T>(rows: &mut [T], sort: Sort, key: impl Fn(&T) -> Option<Key>) {
    let desc = sort.descending();
    let mut keyed: Vec<(Option<Key>, usize)> = rows.iter().map(&key).zip(0..).collect();
    keyed.sort_by(|(a, ia), (b, ib)| {
        let o = match (a, b) {
            (Some(a), Some(b)) if desc => b.cmp(a),
            (Some(a), Some(b)) => a.cmp(b),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        };
        o.then(ia.cmp(ib))
    });
    let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
    permute(rows, &order);
}

/// Reorders `rows` so that position n holds what was at `order[n]`.
fn permute<T>(rows: &mut [T], order: &[usize]) {
    let mut done = vec![false; rows.len()];
    for start in 0..rows.len() {
        if done[start] {
            continue;
        }
        // Follow the cycle that starts here, swapping each element into place.
        let mut at = start;
        loop {
            done[at] = true;
            let from = order[at];
            if done[from] {
                break;
            }
            rows.swap(at, from);
            at = from;
        }
    }
}

/// Bytes in a Kubernetes quantity (`10Gi`, `500M`, `1.5Ti`), for sorting by size.
pub fn quantity_bytes(q: &str) -> Option<i128> {
    let q = q.trim();
    let split = q
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(q.len());
    let (num, unit) = q.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult: f64 = match unit {
        "" => 1.0,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        _ => return None,
    };
    Some((n * mult) as i128)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_with_missing_values_last_both_ways() {
        let mut v = vec![
            ("b", Some(2)),
            ("none", None),
            ("a", Some(1)),
            ("c", Some(2)),
        ];
        let key = |r: &(&str, Option<i128>)| r.1.map(Key::Num);
        apply(&mut v, Sort::by(SortCol::Name), key);
        let names: Vec<_> = v.iter().map(|r| r.0).collect();
        assert_eq!(names, ["a", "b", "c", "none"]);
        apply(&mut v, Sort::by(SortCol::Name).pressed(SortCol::Name), key);
        let names: Vec<_> = v.iter().map(|r| r.0).collect();
        assert_eq!(names, ["b", "c", "a", "none"], "ties keep their order");
    }

    #[test]
    fn the_same_key_reverses_another_starts_over() {
        let s = Sort::by(SortCol::Age);
        assert!(!s.descending());
        assert_eq!(s.arrow(), "↑");
        let r = s.pressed(SortCol::Age);
        assert!(r.reversed && r.descending());
        assert_eq!(r.pressed(SortCol::Name), Sort::by(SortCol::Name));
        assert!(Sort::by(SortCol::Findings).descending(), "worst first");
    }

    #[test]
    fn sizes_compare_across_units() {
        assert!(quantity_bytes("1Gi") > quantity_bytes("900Mi"));
        assert_eq!(quantity_bytes("2Ki"), Some(2048));
        assert_eq!(quantity_bytes("1.5G"), Some(1_500_000_000));
        assert_eq!(quantity_bytes("lots"), None);
    }
}
