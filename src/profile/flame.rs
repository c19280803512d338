//! Flame graphs drawn by inferno (SVG with its own search and zoom script).

use inferno::flamegraph::{self, Options};

/// A flame graph of folded stacks; `count_name` is what one unit of width is.
pub fn svg(
    lines: &[String],
    title: &str,
    subtitle: Option<String>,
    count_name: &str,
) -> Result<String, String> {
    if lines.is_empty() {
        return Err("no stacks to draw".into());
    }
    let mut o = Options::default();
    o.title = title.to_string();
    o.subtitle = subtitle;
    o.count_name = count_name.to_string();
    // The same profile draws the same picture (colours hashed from names, not random).
    o.hash = true;
    o.deterministic = true;
    let mut out = Vec::new();
    flamegraph::from_lines(&mut o, lines.iter().map(String::as_str), &mut out)
        .map_err(|e| format!("drawing the flame graph: {e}"))?;
    String::from_utf8(out).map_err(|e| format!("drawing the flame graph: {e}"))
}

/// Folded stacks as the lines a flame graph is drawn from.
pub fn lines(stacks: &[(String, u64)]) -> Vec<String> {
    stacks.iter().map(|(s, n)| format!("{s} {n}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_an_svg_with_the_frames() {
        let s = svg(
            &lines(&super::super::fold::parse(
                "main;ExecutorRun 3\nmain;other 1\n",
            )),
            "t",
            None,
            "samples",
        )
        .unwrap();
        assert!(s.contains("<svg") && s.contains("ExecutorRun"));
        assert!(svg(&[], "t", None, "samples").is_err());
    }
}
