//! Text inside HTML and SVG markup: the report's page and its charts, and the history's page.

/// `s` with the five characters markup gives meaning to written as entities, so a target name
/// or an error message is shown as it is and never read as markup.
pub fn esc(s: &str) -> String {
    // Control characters and bidirectional overrides are written as visible escapes first.
    let s = crate::untrusted::printable(s);
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Text in report.md, where Markdown and inline HTML are read: `esc`'s entities for `&`, `<`
/// and `>` (as report.html shows the text, never as markup), `|` escaped (it would end a table
/// cell), a line break made a space, and control characters made visible (`printable`).
pub fn md(s: &str) -> String {
    let s = crate::untrusted::printable(s);
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '|' => o.push_str("\\|"),
            '\n' | '\r' => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_text_is_shown_not_read() {
        assert_eq!(
            md("<script>x</script> | a\nb"),
            "&lt;script&gt;x&lt;/script&gt; \\| a b"
        );
        assert_eq!(md("\u{1b}[2J"), "\\u{1b}[2J");
    }
}
