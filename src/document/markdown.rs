//! Cluster text inside Markdown that renders on GitHub and GitLab. Whoever can create an object
//! writes its names and messages: a backtick ends a code span, a `|` a table cell, a newline
//! the whole line, `<script>` or `[x](y)` become HTML and links. Every value from the cluster
//! goes through [`code`] or [`text`]; only our own words are written raw.

use crate::text::one_line;

/// Escapes that only a table row needs: a `|` would start a new cell even inside a code span
/// (GFM splits cells before it reads code spans, and honours `\|` there).
fn cell_safe(s: &str) -> String {
    s.replace('|', "\\|")
}

/// `value` as one code span on one line, in a table cell or in prose alike: control characters
/// are shown as escapes (`\n`, `\e`), bidi controls dropped, the fence is longer than any run
/// of backticks inside, and a `|` cannot split a table row.
pub fn code(value: &str) -> String {
    let v = one_line(value);
    if v.is_empty() {
        return "(empty)".into();
    }
    let longest = v.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    // A span starting or ending with a backtick needs a space between it and the fence, which
    // the renderer strips again; one on each side keeps it symmetric.
    let pad = if v.starts_with('`') || v.ends_with('`') {
        " "
    } else {
        ""
    };
    cell_safe(&format!("{fence}{pad}{v}{pad}{fence}"))
}

/// `value` as plain prose: one line, and every character Markdown or HTML could act on
/// escaped with a backslash, so it reads as written and cannot open a link, tag, emphasis,
/// math or cell.
pub fn text(value: &str) -> String {
    let v = one_line(value);
    let mut out = String::with_capacity(v.len() + 8);
    for c in v.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' | '$' | '!' | '#'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_span_outlasts_the_backticks_inside_it() {
        assert_eq!(code("vm-disk-data"), "`vm-disk-data`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x``"), "``` `x`` ```");
        assert_eq!(code(""), "(empty)");
    }

    #[test]
    fn nothing_from_the_cluster_breaks_a_line_or_a_cell() {
        let hostile = "x|y\n# head\r\u{1b}[2J<b>";
        let c = code(hostile);
        assert!(!c.contains('\n') && !c.contains('\r') && !c.contains('\u{1b}'));
        assert!(c.contains("x\\|y"), "{c}");
        let t = text(hostile);
        assert!(!t.contains('\n') && !t.contains('\u{1b}'));
        assert!(t.contains("\\<b\\>") && t.contains("x\\|y"), "{t}");
    }
}
