//! Cluster text inside Markdown that renders on GitHub and GitLab. Whoever can create an object
//! writes its names and messages: a backtick ends a code span, a `|` a table cell, a newline
//! the whole line, `<img>` or `[x](y)` become HTML and links, and even text escaped with
//! backslashes still turns a bare `https://…`, `www.…` or `a@b.c` into a link and `@user` /
//! `@org/team` into a mention that notifies people once the report is pasted into an issue.
//! Only a code span is left alone by every renderer (no autolink, no mention, no HTML), so
//! every value and every message from the cluster goes into one, through [`code`] or, inside a
//! table row, [`cell`]; only our own words are written outside.

use crate::text::one_line;

/// `value` as one code span on one line, for prose (a heading, a list item, a sentence):
/// control characters are shown as escapes (`\n`, `\e`), bidi controls dropped, and the fence
/// is longer than any run of backticks inside.
pub fn code(value: &str) -> String {
    let v = one_line(value);
    if v.is_empty() {
        return "(empty)".into();
    }
    let longest = v.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    // A renderer strips one space from each end of a span that starts or ends with a backtick
    // (so the fence can touch it) or with a space on both ends: padding with one space each
    // side gives back exactly the value.
    let pad = v.starts_with('`')
        || v.ends_with('`')
        || (v.len() > 1 && v.starts_with(' ') && v.ends_with(' '));
    let pad = if pad { " " } else { "" };
    format!("{fence}{pad}{v}{pad}{fence}")
}

/// [`code`] inside a table row: GFM splits a row into cells at every `|` before it reads code
/// spans, a `\|` excepted, which it turns back into `|` inside the span too. A backslash
/// already in front of the `|` stays: the row scanner takes `\|` whatever comes before it.
pub fn cell(value: &str) -> String {
    code(value).replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_span_outlasts_the_backticks_inside_it() {
        assert_eq!(code("vm-disk-data"), "`vm-disk-data`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x``"), "``` `x`` ```");
        assert_eq!(code(" x "), "`  x  `");
        assert_eq!(code(""), "(empty)");
    }

    #[test]
    fn nothing_from_the_cluster_breaks_a_line_or_a_cell() {
        let hostile = "x|y\n# head\r\u{1b}[2J<b>";
        let c = cell(hostile);
        assert!(!c.contains('\n') && !c.contains('\r') && !c.contains('\u{1b}'));
        assert!(c.contains("x\\|y"), "{c}");
        let p = code(hostile);
        assert!(p.starts_with('`') && p.contains("x|y"), "{p}");
    }
}
