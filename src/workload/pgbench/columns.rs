//! The names `\gset` and `\aset` give the columns of a query, from its select list (or its
//! RETURNING list), as PostgreSQL names them: an alias (`AS name`, or a name after the
//! expression), a column's own name (`t.abalance` is `abalance`), a function's name
//! (`count(*)` is `count`); unquoted names folded to lower case. dbperf's connections return
//! values without column names on every engine, so the names are read here, before anything
//! runs; an item that has none (`1 + 1`, `*`) is refused with a sentence asking for an alias.

/// The select list's column names, or why one cannot be named.
pub fn select_names(sql: &str) -> Result<Vec<String>, String> {
    let list = select_list(sql).ok_or("the command has no SELECT or RETURNING list")?;
    let items = split_top(list, ',');
    let mut out = Vec::new();
    for item in items {
        let item = item.trim();
        match item_name(item) {
            Some(n) => out.push(n),
            None => {
                return Err(format!(
                    "the select list's item {} has no name dbperf can know; give it one \
                     (AS name)",
                    crate::untrusted::shown(item)
                ))
            }
        }
    }
    Ok(out)
}

/// Words at the top level (outside quotes and parentheses), with their byte offsets.
fn top_words(s: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut word_start: Option<usize> = None;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        let wordy = c.is_alphanumeric() || c == '_';
        if wordy && depth == 0 {
            word_start.get_or_insert(i);
            continue;
        }
        if let Some(st) = word_start.take() {
            out.push((st, s[st..i].to_ascii_lowercase()));
        }
        match c {
            '\'' | '"' | '`' => quote = Some(c),
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
    }
    if let Some(st) = word_start {
        out.push((st, s[st..].to_ascii_lowercase()));
    }
    out
}

/// The text of the select list: after SELECT up to the clause that ends it, or after RETURNING.
fn select_list(sql: &str) -> Option<&str> {
    let words = top_words(sql);
    let sql = sql.trim_end().trim_end_matches(';');
    if let Some((at, _)) = words.iter().find(|(_, w)| w == "returning") {
        return Some(&sql[at + "returning".len()..]);
    }
    let (start, _) = words.iter().find(|(_, w)| w == "select")?;
    let start = start + "select".len();
    const ENDS: [&str; 11] = [
        "from",
        "where",
        "group",
        "having",
        "order",
        "limit",
        "union",
        "intersect",
        "except",
        "into",
        "window",
    ];
    let end = words
        .iter()
        .find(|(at, w)| *at > start && ENDS.contains(&w.as_str()))
        .map_or(sql.len(), |(at, _)| *at);
    sql.get(start..end)
}

/// `s` split at `sep` outside quotes and parentheses.
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut from) = (0i32, None::<char>, 0);
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, _) if c == sep && depth == 0 => {
                out.push(&s[from..i]);
                from = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&s[from..]);
    out
}

/// An identifier as PostgreSQL reads it: `"Name"` kept, `Name` folded to lower case.
fn identifier(s: &str) -> Option<String> {
    if let Some(inner) = s.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
        return (!inner.is_empty()).then(|| inner.to_string());
    }
    let mut c = s.chars();
    let ok = c.next().is_some_and(|f| f.is_alphabetic() || f == '_')
        && c.all(|x| x.is_alphanumeric() || x == '_' || x == '$');
    ok.then(|| s.to_lowercase())
}

fn item_name(item: &str) -> Option<String> {
    // `expr AS name` or `expr name`: the last word is the alias.
    let tokens: Vec<&str> = item.split_whitespace().collect();
    if tokens.len() >= 2 {
        let last = tokens[tokens.len() - 1];
        let before = tokens[tokens.len() - 2];
        if let Some(n) = identifier(last) {
            let ends_expr = !before.ends_with(['+', '-', '*', '/', '%', '=', '<', '>', '|']);
            if before.eq_ignore_ascii_case("as") || ends_expr {
                return Some(n);
            }
        }
        return None;
    }
    let item = tokens.first()?;
    // `f(...)`: the function's name.
    if let Some(open) = item.find('(') {
        return identifier(&item[..open]).filter(|_| item.ends_with(')'));
    }
    // `t.col` or `col`: the column's name.
    identifier(item.rsplit('.').next()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_named_as_postgresql_names_them() {
        let n = |s: &str| select_names(s).unwrap();
        assert_eq!(
            n("SELECT abalance FROM pgbench_accounts WHERE aid = :aid"),
            ["abalance"]
        );
        assert_eq!(
            n("select a.aid, count(*), sum(x) AS Total, 1 one, \"Mixed\" from t a"),
            ["aid", "count", "total", "one", "Mixed"]
        );
        assert_eq!(n("SELECT 1 AS x, 2 AS y;"), ["x", "y"]);
        assert_eq!(
            n("UPDATE t SET v = v + 1 WHERE k = 1 RETURNING v, k AS key"),
            ["v", "key"]
        );
        assert_eq!(n("SELECT coalesce(max(aid), 0) AS m FROM t"), ["m"]);
    }

    #[test]
    fn items_without_a_name_are_refused() {
        for sql in [
            "SELECT 1 + 1",
            "SELECT * FROM t",
            "INSERT INTO t VALUES (1)",
        ] {
            let e = select_names(sql).unwrap_err();
            assert!(
                e.contains("AS name") || e.contains("no SELECT"),
                "{sql}: {e}"
            );
        }
    }
}
