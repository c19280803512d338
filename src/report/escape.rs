//! Text inside HTML and SVG markup: the report's page and its charts, and the history's page.

/// `s` with the five characters markup gives meaning to written as entities, so a target name
/// or an error message is shown as it is and never read as markup.
pub fn esc(s: &str) -> String {
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
