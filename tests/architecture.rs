//! The rooms of the README's "Layout" (the modules under src/) keep their walls: what each module
//! may not import, checked on the source text, so a shortcut through a wall fails here rather
//! than in review.

use std::path::Path;

/// Every room (top-level module) a file names: in `crate::<room>`, `dbperf::<room>` and
/// `super::...` paths (resolved against where the file and its inline modules sit), in `use`
/// lines and inline paths, grouped imports (`use crate::{dbms, server::X}`) included. `module`
/// is the file's module path (`src/cli/run.rs` = `["cli", "run"]`).
fn rooms_named(text: &str, module: &[&str]) -> Vec<String> {
    // A room is the first segment of a path from the crate root (`paths_named` resolves
    // `super` and `self` against where the file sits).
    let mut out: Vec<String> = Vec::new();
    for p in paths_named(text, module, &[]) {
        if let Some(room) = p.first().filter(|r| !r.is_empty() && !out.contains(r)) {
            out.push(room.clone());
        }
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn ident_at(s: &str, i: usize) -> &str {
    let n = s[i..].bytes().take_while(|c| is_ident(*c)).count();
    &s[i..i + n]
}

/// Inline modules (`mod tests { ... }`): name, and the byte range of their body.
fn inline_modules(code: &str) -> Vec<(String, usize, usize)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut open: Vec<(Option<String>, usize)> = Vec::new();
    let mut pending: Option<String> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if is_ident(c) && (i == 0 || !is_ident(b[i - 1])) {
            let w = ident_at(code, i);
            if w == "mod" {
                let rest = code[i + 3..].trim_start();
                let name = ident_at(rest, 0);
                let after = rest[name.len()..].trim_start();
                if !name.is_empty() && after.starts_with('{') {
                    pending = Some(name.to_string());
                }
            }
            i += w.len();
            continue;
        }
        if c == b'{' {
            open.push((pending.take(), i));
        } else if c == b'}' {
            if let Some((Some(name), start)) = open.pop() {
                out.push((name, start, i));
            }
        } else if c == b';' {
            pending = None;
        }
        i += 1;
    }
    out
}

/// The inline modules around byte `at`, outermost first.
fn enclosing_modules(mods: &[(String, usize, usize)], at: usize) -> Vec<String> {
    let mut m: Vec<&(String, usize, usize)> =
        mods.iter().filter(|(_, s, e)| *s < at && at < *e).collect();
    m.sort_by_key(|(_, s, _)| *s);
    m.into_iter().map(|(n, _, _)| n.clone()).collect()
}

/// The source with comments, string and char literals replaced by spaces (same length), so
/// neither a path in a doc comment nor a brace in a string counts.
fn blank_comments_and_literals(text: &str) -> String {
    blanked(text, true)
}

/// `text` with its comments blanked, and its string and char literals too when `literals`
/// (byte for byte: every offset stays where it was).
fn blanked(text: &str, literals: bool) -> String {
    let b = text.as_bytes();
    let mut o = b.to_vec();
    let mut i = 0;
    let blank = |o: &mut Vec<u8>, from: usize, to: usize| {
        for x in o.iter_mut().take(to.min(b.len())).skip(from) {
            if *x != b'\n' {
                *x = b' ';
            }
        }
    };
    let blank_literal = |o: &mut Vec<u8>, from: usize, to: usize| {
        if literals {
            blank(o, from, to)
        }
    };
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let end = text[i..].find('\n').map(|k| i + k).unwrap_or(b.len());
            blank(&mut o, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let end = text[i + 2..]
                .find("*/")
                .map(|k| i + 2 + k + 2)
                .unwrap_or(b.len());
            blank(&mut o, i, end);
            i = end;
        } else if b[i] == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !is_ident(b[i - 1]))
        {
            let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            let from = i + 2 + hashes;
            let end = text[from..]
                .find(&close)
                .map(|k| from + k + close.len())
                .unwrap_or(b.len());
            blank_literal(&mut o, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank_literal(&mut o, i, j + 1);
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '{'), not a lifetime ('a).
            if b.get(i + 1) == Some(&b'\\') {
                let end = text[i + 2..]
                    .find('\'')
                    .map(|k| i + 2 + k + 1)
                    .unwrap_or(b.len());
                blank_literal(&mut o, i, end);
                i = end;
            } else if let Some(c) = text[i + 1..].chars().next() {
                let end = i + 1 + c.len_utf8();
                if b.get(end) == Some(&b'\'') {
                    blank_literal(&mut o, i, end + 1);
                    i = end + 1;
                } else {
                    i += 1;
                }
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(o).expect("only ASCII was replaced")
}

/// The module path of a source file: `src/cli/run.rs` is `cli::run`, `src/cli/mod.rs` is `cli`.
fn module_of(file: &Path) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rel = file.strip_prefix(&src).unwrap();
    let mut m: Vec<String> = rel
        .iter()
        .map(|s| s.to_str().unwrap().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        m.pop();
    }
    m
}

fn files(dir: &str) -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    assert!(!out.is_empty(), "no sources under src/{dir}");
    out
}

/// Fails with every file of `dir` (but `except`) that names one of `forbidden`.
fn walls(dir: &str, except: &[&str], forbidden: &[&str]) {
    let mut breaches = Vec::new();
    for f in files(dir) {
        let name = f.file_name().unwrap().to_str().unwrap();
        if except.contains(&name) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let module = module_of(&f);
        let module: Vec<&str> = module.iter().map(String::as_str).collect();
        for room in rooms_named(&text, &module) {
            if forbidden.contains(&room.as_str()) {
                breaches.push(format!("{} uses the room {room}", f.display()));
            }
        }
    }
    assert!(breaches.is_empty(), "{}", breaches.join("\n"));
}

#[test]
fn the_cli_run_path_reaches_the_machinery_only_through_session() {
    // `dbperf writeamp` is a small command that calls its rooms directly; everything else in
    // the CLI (`dbperf server start|stop` too: session/instance.rs) parses, renders and hands
    // over to session.
    walls(
        "cli",
        &["writeamp.rs"],
        &["dbms", "server", "runner", "metrics"],
    );
}

#[test]
fn results_are_plain_data() {
    walls(
        "results",
        &[],
        &["metrics", "runner", "dbms", "server", "session", "report"],
    );
}

#[test]
fn reports_read_results_only() {
    walls(
        "report",
        &[],
        &["metrics", "runner", "dbms", "server", "session", "workload"],
    );
}

#[test]
fn analysis_is_statistics_over_numbers_it_is_given() {
    // Reports, the history and the CLI call it; it reads nothing and calls none of them.
    walls(
        "analysis",
        &[],
        &[
            "report", "history", "cli", "session", "runner", "dbms", "server", "metrics",
            "workload", "fetch",
        ],
    );
}

#[test]
fn fetch_gets_builds_and_starts_nothing() {
    // It may recognise a build's layout (server::layout) but never run a server or a benchmark.
    walls(
        "fetch",
        &[],
        &[
            "session", "runner", "dbms", "metrics", "report", "workload", "cli",
        ],
    );
}

#[test]
fn a_bisect_runs_through_the_session_and_judges_through_the_report() {
    walls(
        "bisect",
        &[],
        &["cli", "dbms", "server", "runner", "metrics", "workload"],
    );
}

#[test]
fn the_session_does_not_print_or_parse_flags() {
    walls("session", &[], &["cli"]);
    for f in files("session") {
        let text = std::fs::read_to_string(&f).unwrap();
        for bad in ["println!", "eprintln!", "print!(", "clap::"] {
            assert!(
                !text.contains(bad),
                "{} uses {bad}: the session tells the CLI through events",
                f.display()
            );
        }
    }
}

#[test]
fn the_scanner_sees_paths() {
    let cli = ["cli", "run"];
    let seen = |text: &str, module: &[&str]| rooms_named(text, module);
    assert_eq!(
        seen(
            "use crate::dbms::{self, Dbms};\nlet x = crate::server::Plan::new();",
            &cli
        ),
        ["dbms", "server"]
    );
    // Grouped imports, nested groups, the crate's own name.
    assert_eq!(
        seen(
            "use crate::{\n    dbms,\n    runner::{self, X},\n    self as me,\n};",
            &cli
        ),
        ["dbms", "runner"]
    );
    assert_eq!(seen("let v = dbperf::metrics::read();", &cli), ["metrics"]);
    // `super` steps out of the file's module, and out of its inline modules.
    assert_eq!(seen("use super::render::Terminal;", &cli), ["cli"]);
    assert_eq!(seen("use super::super::runner::Roles;", &cli), ["runner"]);
    assert_eq!(
        seen("use super::{dbms, server::Plan};", &["cli"]),
        ["dbms", "server"]
    );
    assert_eq!(
        seen(
            "mod tests {\n    use super::super::server::x;\n}",
            &["cli", "run"]
        ),
        ["cli"],
        "inside `mod tests` of cli::run, super::super is cli"
    );
    assert_eq!(
        seen(
            "mod tests {\n    use super::super::super::server::x;\n}",
            &["cli", "run"]
        ),
        ["server"]
    );
    // Comments and strings are not code.
    assert!(seen("// crate::dbms\nlet s = \"crate::server {\";", &cli).is_empty());
    assert_eq!(seen("let c = '{'; use crate::metrics;", &cli), ["metrics"]);
    assert_eq!(
        module_of(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/cli/mod.rs"
        ))),
        ["cli"]
    );
}

#[test]
fn the_history_reads_results_and_runs_nothing() {
    // It reaches PostgreSQL through dbms' client, and reads result files; it never runs a
    // benchmark or a server.
    walls(
        "history",
        &[],
        &["session", "runner", "workload", "server", "metrics", "cli"],
    );
}

/// The process's arguments are read once, by the CLI's entry (`cli::main` through `cli::parse`);
/// everything after gets them typed, with which options were given (`Given`). A second reader
/// is how a resumed campaign once took the resuming command line's --preset for its own.
#[test]
fn the_command_line_is_read_once() {
    let entry = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli/mod.rs");
    let mut readers = Vec::new();
    for f in files("") {
        let code = blank_comments_and_literals(&std::fs::read_to_string(&f).unwrap());
        let n = [
            "env::args()",
            "env::args_os()",
            "Cli::parse()",
            "Cli::try_parse()",
        ]
        .iter()
        .map(|r| code.matches(r).count())
        .sum::<usize>();
        if n > 0 {
            readers.push((f.clone(), n));
        }
    }
    assert_eq!(readers, [(entry, 1)], "readers of the process's arguments");
}

/// `code` (comments and literals blanked) without what only tests compile: each item under
/// `#[cfg(test)]` (a `mod tests { ... }`, a helper function) up to the end of its body, or of
/// its declaration when it has none (`mod tests;`, whose file `files_outside_tests` leaves out).
fn without_test_code(code: &str) -> String {
    let mut out = code.to_string();
    for (from, to) in test_code(code) {
        out.replace_range(from..to, &" ".repeat(to - from));
    }
    out
}

/// The byte ranges of the items under `#[cfg(test)]` in `code` (comments and literals blanked).
fn test_code(code: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(k) = code[from..].find("#[cfg(test)]") {
        let at = from + k;
        let end = item_end(code, at);
        out.push((at, end));
        from = end;
    }
    out
}

/// Where the item starting at `at` ends: after the brace closing its body, or after its `;`.
fn item_end(code: &str, at: usize) -> usize {
    let mut depth = 0;
    // Brackets and parentheses: a `;` in `[u8; 2]` does not end the item.
    let mut inner = 0i32;
    for (k, c) in code[at..].char_indices() {
        match c {
            '[' | '(' => inner += 1,
            ']' | ')' => inner -= 1,
            ';' if depth == 0 && inner == 0 => return at + k + 1,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return at + k + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// Every source file but the test modules kept in files of their own (`#[cfg(test)] mod
/// tests;` is always `tests.rs`).
fn files_outside_tests() -> Vec<std::path::PathBuf> {
    files("")
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n != "tests.rs"))
        .collect()
}

/// How code once told errors apart by their sentence: the matchers themselves, and reading an
/// error's text to decide.
const BY_TEXT: [&str; 5] = [
    "is_no_answer",
    "is_server_fault",
    "is_from_the_future",
    ".to_string().contains(",
    "message.contains(",
];

/// Which of `BY_TEXT` the code of `text` uses (comments, literals and test code left out).
fn decides_by_text(text: &str) -> Vec<&'static str> {
    let code = without_test_code(&blank_comments_and_literals(text));
    BY_TEXT
        .iter()
        .copied()
        .filter(|p| code.contains(p))
        .collect()
}

/// What dbperf acts on in an error (an exit code, a server's log tail, a report that stops) is
/// its kind as a type, found by downcast through the chain (`dbms::Fault`, `dbms::Lost`,
/// `error::BadInput`, `error::SchemaTooNew`), never its sentence: rewording a sentence must not
/// change what happens. Tests may read sentences; the code under them may not.
#[test]
fn errors_are_told_apart_by_type_not_by_text() {
    let mut found = Vec::new();
    for f in files_outside_tests() {
        for p in decides_by_text(&std::fs::read_to_string(&f).unwrap()) {
            found.push(format!("{}: {p}", f.display()));
        }
    }
    assert!(
        found.is_empty(),
        "decided by an error's text:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_text_check_sees_code_and_not_tests_comments_or_strings() {
    // What the code did before errors had kinds.
    let old = "pub fn is_server_fault(message: &str) -> bool {\n    \
               message.contains(\"protocol error:\")\n}\n\
               pub fn is_from_the_future(e: &anyhow::Error) -> bool {\n    \
               crate::error::is_bad_input(e) && e.to_string().contains(NEWER)\n}\n";
    assert_eq!(
        decides_by_text(old),
        [
            "is_server_fault",
            "is_from_the_future",
            ".to_string().contains(",
            "message.contains("
        ]
    );
    assert_eq!(
        decides_by_text("if stalled || dbms::is_no_answer(e) {}"),
        ["is_no_answer"]
    );
    // Tests, comments and strings are not code that decides.
    let tests = "fn f() {}\n#[cfg(test)]\nmod tests {\n    fn t() { \
                 assert!(e.to_string().contains(\"x\")); }\n}\n\
                 #[cfg(test)]\nfn helper() { e.message.contains(\"y\"); }\n\
                 #[cfg(test)]\nmod more;\n\
                 // is_no_answer was here\nlet s = \"message.contains(\";\n";
    assert!(decides_by_text(tests).is_empty());
    // Code after a test module is still seen.
    let after = "#[cfg(test)]\nmod tests { fn t() {} }\nfn g(m: &str) -> bool { m.to_string().contains(\"z\") }";
    assert_eq!(decides_by_text(after), [".to_string().contains("]);
}

/// Every name the engine registry gives, as a string literal: `"sqlite"`, `"postgres"`, ...
fn engine_names() -> Vec<String> {
    dbperf::engines::REGISTRY
        .iter()
        .map(|e| format!("\"{}\"", e.name))
        .collect()
}

/// A line that writes such a name for something else (a program's file name, a PostgreSQL
/// role, JSON's null) says so in a comment holding these words.
const NOT_AN_ENGINE: &str = "not an engine";

/// Engine names written as string literals in the code of `text` (comments and test code left
/// out), but on lines that say they are not an engine's.
fn engine_names_in(text: &str) -> Vec<String> {
    names_in(text, &engine_names(), NOT_AN_ENGINE)
}

/// Which of `names` (string literals) the code of `text` writes (comments and test code left
/// out), but on lines holding `marker` in a comment.
fn names_in(text: &str, names: &[String], marker: &str) -> Vec<String> {
    // Test code is found on the fully blanked text (a brace in a string must not end a
    // module); blanking keeps every offset, so its ranges hold in the other text too.
    let mut code = blanked(text, false);
    for (from, to) in test_code(&blank_comments_and_literals(text)) {
        code.replace_range(from..to, &" ".repeat(to - from));
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for n in names {
        let named = code.match_indices(n.as_str()).any(|(at, _)| {
            let line = text[..at].matches('\n').count();
            !lines.get(line).is_some_and(|l| l.contains(marker))
        });
        if named {
            found.push(n.clone());
        }
    }
    found
}

/// `names` written outside `registry` (the one file that names them) in the crate's code and
/// its examples, as `file: name`.
fn named_outside(registry: &str, names: &[String], marker: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    let examples = std::fs::read_dir(root.join("examples"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"));
    for f in files_outside_tests().into_iter().chain(examples) {
        let rel = f.strip_prefix(root).unwrap().to_string_lossy().to_string();
        if rel == registry {
            continue;
        }
        for n in names_in(&std::fs::read_to_string(&f).unwrap(), names, marker) {
            found.push(format!("{rel}: {n}"));
        }
    }
    found
}

/// An engine is the `Engine` type and its registry entry: code decides by the type (a `match`
/// fails to compile where a new engine needs a decision), never by comparing a name, which a
/// new engine would silently fall through. The registry itself is the one place that names
/// them; the examples are held to it too.
#[test]
fn engines_are_named_by_the_registry_only() {
    let found = named_outside("src/engines.rs", &engine_names(), NOT_AN_ENGINE);
    assert!(
        found.is_empty(),
        "engine names outside the registry (a line naming something else says \"{NOT_AN_ENGINE}\" \
         in a comment):\n{}",
        found.join("\n")
    );
}

/// A suite is the `Suite` type and its registry entry, as an engine is: code decides by a
/// `match` on the type (which fails to compile where a new suite needs a decision), never by
/// comparing a name, which a new suite would silently fall through (the report once rendered
/// any suite but the Insert Benchmark as sysbench).
#[test]
fn suites_are_named_by_the_registry_only() {
    let names: Vec<String> = dbperf::suites::REGISTRY
        .iter()
        .map(|e| format!("\"{}\"", e.name))
        .collect();
    let found = named_outside("src/suites.rs", &names, NOT_A_SUITE);
    assert!(
        found.is_empty(),
        "suite names outside the registry (a line naming something else says \"{NOT_A_SUITE}\" \
         in a comment):\n{}",
        found.join("\n")
    );
}

/// What a line that writes a suite's name for something else says in a comment.
const NOT_A_SUITE: &str = "not a suite";

#[test]
fn the_engine_name_check_sees_code_literals_only() {
    assert_eq!(
        engine_names_in("if t.engine == \"postgres\" { 5432 } else { 3306 }"),
        ["\"postgres\""]
    );
    assert_eq!(
        engine_names_in("match e { \"mariadb\" | \"mysql\" => 1, _ => 0 }"),
        ["\"mariadb\"", "\"mysql\""]
    );
    // A line that says what else it names; the same name elsewhere is still seen.
    let program = "const PG: &str = \"postgres\"; // a program's name, not an engine's\n";
    assert!(engine_names_in(program).is_empty());
    let again = format!("{program}let e = \"postgres\";\n");
    assert_eq!(engine_names_in(&again), ["\"postgres\""]);
    // Test code whose signature holds an array type is still test code.
    let arr = "#[cfg(test)]\nfn t(x: [u8; 2]) { let e = \"sqlite\"; }\n";
    assert!(
        engine_names_in(arr).is_empty(),
        "{:?}",
        engine_names_in(arr)
    );
    // Comments, longer strings and tests are not a decision by name.
    let not = "/// {\"engine\": \"mysql\"}\nlet s = \"sqlite is embedded\";\n\
               #[cfg(test)]\nmod tests { fn t() { let e = \"sqlite\"; let b = \"}\"; } }\n";
    assert!(
        engine_names_in(not).is_empty(),
        "{:?}",
        engine_names_in(not)
    );
    // Code after a test module is seen.
    let after = "#[cfg(test)]\nmod tests { fn t() {} }\nfn g() -> &'static str { \"sqlite\" }";
    assert_eq!(engine_names_in(after), ["\"sqlite\""]);
}

/// The registries are the floor every room stands on: they name no room of the crate, so any
/// room may use them without a circle.
#[test]
fn the_engine_registry_uses_no_room() {
    for registry in ["engines", "suites"] {
        let f = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("src/{registry}.rs"));
        let rooms: Vec<String> = rooms_named(&std::fs::read_to_string(&f).unwrap(), &[registry])
            .into_iter()
            .filter(|r| r != registry)
            .collect();
        assert!(rooms.is_empty(), "src/{registry}.rs uses {rooms:?}");
    }
}

/// The module paths `text` names, each as far as it is written (`use super::{model::Cell,
/// rules}` in `report::ibench` names `report::model::Cell` and `report::rules`): paths from
/// `crate`, `dbperf`, `super` and `self`, and paths through the file's own child modules
/// (`children`: what `mod.rs` calls its files by). Comments and literals are not code.
fn paths_named(text: &str, module: &[&str], children: &[String]) -> Vec<Vec<String>> {
    let code = blank_comments_and_literals(text);
    let b = code.as_bytes();
    let mods = inline_modules(&code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts_word = i == 0 || !is_ident(b[i - 1]) && b[i - 1] != b':';
        if !starts_word || !is_ident(b[i]) {
            i += 1;
            continue;
        }
        let word = ident_at(&code, i);
        let after = i + word.len();
        if !code[after..].starts_with("::") {
            i = after.max(i + 1);
            continue;
        }
        let mut here: Vec<String> = module.iter().map(|m| m.to_string()).collect();
        here.extend(enclosing_modules(&mods, i));
        let (base, rest_at): (Vec<String>, usize) = match word {
            "crate" | "dbperf" => (Vec::new(), after + 2),
            "self" => (here, after + 2),
            "super" => {
                let mut j = i;
                while code[j..].starts_with("super::") {
                    here.pop();
                    j += "super::".len();
                }
                (here, j)
            }
            w if children.iter().any(|c| c == w) && enclosing_modules(&mods, i).is_empty() => {
                (here, i)
            }
            _ => {
                i = after;
                continue;
            }
        };
        for tail in use_tree(&code[rest_at..]) {
            let mut p = base.clone();
            p.extend(tail);
            out.push(p);
        }
        i = after;
    }
    out
}

/// The paths of a use tree's remainder: `a::b::C` is `[a, b, C]`; `a::{b, c::D}` is `[a, b]`
/// and `[a, c, D]`; `self` in a group is the group's own path.
fn use_tree(rest: &str) -> Vec<Vec<String>> {
    let rest = rest.trim_start();
    if let Some(inner) = rest.strip_prefix('{') {
        let mut out = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        for (k, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    out.extend(use_tree(&inner[start..k]));
                    return out;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.extend(use_tree(&inner[start..k]));
                    start = k + 1;
                }
                _ => {}
            }
        }
        return out;
    }
    let word = ident_at(rest, 0);
    if word.is_empty() {
        // A glob (`super::*`) names the module it is in.
        return if rest.starts_with('*') {
            vec![Vec::new()]
        } else {
            Vec::new()
        };
    }
    if word == "self" {
        return vec![Vec::new()];
    }
    let after = &rest[word.len()..];
    match after.strip_prefix("::") {
        Some(more) => use_tree(more)
            .into_iter()
            .map(|mut t| {
                t.insert(0, word.to_string());
                t
            })
            .collect(),
        None => vec![vec![word.to_string()]],
    }
}

/// Which file of `files` (module paths) a path lands in: the longest one it starts with.
fn file_of<'a>(path: &[String], files: &'a [Vec<String>]) -> Option<&'a Vec<String>> {
    files
        .iter()
        .filter(|f| !f.is_empty() && path.starts_with(f))
        .max_by_key(|f| f.len())
}

/// Every source file's module path and the files it imports (itself left out).
fn import_graph() -> Vec<(Vec<String>, Vec<Vec<String>>)> {
    let all = files("");
    let modules: Vec<Vec<String>> = all.iter().map(|f| module_of(f)).collect();
    let mut out = Vec::new();
    for (f, m) in all.iter().zip(&modules) {
        let children: Vec<String> = modules
            .iter()
            .filter(|c| c.len() == m.len() + 1 && c.starts_with(m))
            .map(|c| c[m.len()].clone())
            .collect();
        let me: Vec<&str> = m.iter().map(String::as_str).collect();
        // A unit test may reach a file that imports its own (a fixture, the other end of a
        // protocol); what counts is what the code under it needs.
        let text = without_test_code(&std::fs::read_to_string(f).unwrap());
        let mut to: Vec<Vec<String>> = Vec::new();
        for p in paths_named(&text, &me, &children) {
            if let Some(t) = file_of(&p, &modules) {
                if t != m && !to.contains(t) {
                    to.push(t.clone());
                }
            }
        }
        out.push((m.clone(), to));
    }
    out
}

/// An import circle among the files of `room`, as `a -> b -> a`; None when there is none.
/// `parents`: whether a `mod.rs` and the files under it count too (a file taking a type from
/// its `mod.rs`, which calls the file, is a circle), or only files beside each other.
fn circle_in(
    room: &str,
    graph: &[(Vec<String>, Vec<Vec<String>>)],
    parents: bool,
) -> Option<String> {
    let inside = |m: &Vec<String>| m.first().is_some_and(|r| r == room);
    let nodes: Vec<&Vec<String>> = graph.iter().map(|(m, _)| m).filter(|m| inside(m)).collect();
    let next = |m: &Vec<String>| -> Vec<&Vec<String>> {
        let kin = |t: &Vec<String>| t.starts_with(m) || m.starts_with(t);
        graph
            .iter()
            .find(|(n, _)| n == m)
            .map(|(_, to)| {
                to.iter()
                    .filter(|t| inside(t) && (parents || !kin(t)))
                    .collect()
            })
            .unwrap_or_default()
    };
    // Depth-first, keeping the path: a node met again on the path closes a circle.
    fn walk<'a>(
        m: &'a Vec<String>,
        next: &dyn Fn(&Vec<String>) -> Vec<&'a Vec<String>>,
        path: &mut Vec<&'a Vec<String>>,
        done: &mut Vec<&'a Vec<String>>,
    ) -> Option<String> {
        if let Some(k) = path.iter().position(|p| *p == m) {
            let mut c: Vec<String> = path[k..].iter().map(|p| p.join("::")).collect();
            c.push(m.join("::"));
            return Some(c.join(" -> "));
        }
        if done.contains(&m) {
            return None;
        }
        path.push(m);
        for n in next(m) {
            if let Some(c) = walk(n, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.push(m);
        None
    }
    let mut done = Vec::new();
    for n in nodes {
        if let Some(c) = walk(n, &next, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

/// Rooms whose files beside each other still import in a circle, each named here until it is
/// untied.
const CIRCLES_KNOWN: &[&str] = &[];

/// Rooms whose `mod.rs` and a file under it import each other (the file takes a type or a
/// helper from `mod.rs`, which calls the file): named here until the shared part moves into a
/// file of its own that both import.
const CIRCLES_THROUGH_MOD_RS: &[&str] = &[
    "cli", "dbms", "fetch", "history", "host", "profile", "results", "runner", "server", "session",
    "workload",
];

/// Within a room, files import one way: a file never reaches back, through others, to one that
/// imports it. A circle makes every file of it depend on all the others, so none can be read,
/// tested or moved alone (report's loading, host check and repeats once were one such knot).
/// Files beside each other hold to it in every room; a `mod.rs` with the files under it, in
/// the rooms not named in `CIRCLES_THROUGH_MOD_RS`.
#[test]
fn the_files_of_each_room_import_one_way() {
    let graph = import_graph();
    let mut rooms: Vec<String> = graph
        .iter()
        .filter(|(m, _)| m.len() > 1)
        .map(|(m, _)| m[0].clone())
        .collect();
    rooms.sort();
    rooms.dedup();
    let mut found = Vec::new();
    for room in &rooms {
        for (parents, known) in [(false, CIRCLES_KNOWN), (true, CIRCLES_THROUGH_MOD_RS)] {
            match (
                circle_in(room, &graph, parents),
                known.contains(&room.as_str()),
            ) {
                (Some(c), false) => found.push(c),
                (None, true) => found.push(format!("{room} has no such circle left: unname it")),
                _ => {}
            }
        }
    }
    found.dedup();
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// The report's files by layer, lowest first (docs/architecture.md, "A report"): loading the
/// result directories; the parts documents are made of (the model, its rules and number
/// formats, charts); the sections built from both; their rendering as HTML, Markdown, JSON
/// and CSV. `mod.rs`, which runs the whole, is above them all.
const REPORT_LAYERS: &[(&str, &[&str])] = &[
    (
        "load",
        &[
            "target",
            "input",
            "hosts",
            "rounds",
            "completeness",
            "suite",
        ],
    ),
    ("parts", &["model", "rules", "number", "escape", "chart"]),
    (
        "sections",
        &[
            "context",
            "common",
            "confidence",
            "latency",
            "devices",
            "ibench",
            "sysbench",
            "tpcc",
            "pgbench",
            "details",
            "profiles",
            "repeats",
            "residency",
            "scaling",
        ],
    ),
    ("render", &["html", "markdown", "export", "bisect"]),
];

/// A lower layer of the report never imports a higher one, so loading can be tested without
/// tables and sections without a renderer.
#[test]
fn the_report_is_built_in_layers() {
    let layer = |m: &[String]| -> Option<usize> {
        match m.get(1) {
            None => Some(REPORT_LAYERS.len()),
            Some(f) => REPORT_LAYERS
                .iter()
                .position(|(_, fs)| fs.contains(&f.as_str())),
        }
    };
    let name = |l: usize| REPORT_LAYERS.get(l).map_or("mod.rs", |x| x.0);
    let in_report = |m: &Vec<String>| m.first().is_some_and(|r| r == "report");
    let mut breaches = Vec::new();
    for (m, to) in import_graph().iter().filter(|(m, _)| in_report(m)) {
        let Some(mine) = layer(m) else {
            breaches.push(format!("{} is in no layer of REPORT_LAYERS", m.join("::")));
            continue;
        };
        for t in to.iter().filter(|t| in_report(t)) {
            if let Some(theirs) = layer(t).filter(|l| *l > mine) {
                breaches.push(format!(
                    "{} ({}) imports {} ({})",
                    m.join("::"),
                    name(mine),
                    t.join("::"),
                    name(theirs)
                ));
            }
        }
    }
    assert!(breaches.is_empty(), "{}", breaches.join("\n"));
}

#[test]
fn the_import_graph_sees_groups_children_and_super() {
    let names = |text: &str, module: &[&str], kids: &[&str]| -> Vec<String> {
        let kids: Vec<String> = kids.iter().map(|k| k.to_string()).collect();
        paths_named(text, module, &kids)
            .iter()
            .map(|p| p.join("::"))
            .collect()
    };
    assert_eq!(
        names(
            "use super::{model::{Cell, Row}, rules, self as me};\n\
             let x = crate::results::X; let v = super::model::Value::Num(1.0);\n\
             mod tests { use super::*; }",
            &["report", "ibench"],
            &[]
        ),
        [
            "report::model::Cell",
            "report::model::Row",
            "report::rules",
            "report",
            "results::X",
            "report::model::Value::Num",
            "report::ibench"
        ]
    );
    // mod.rs calls its files by their names; a name inside an inline module is not theirs.
    assert_eq!(
        names(
            "use input::TargetResult;\nfn f() { ibench::build(); }\nmod t { fn g() { ibench::x(); } }",
            &["report"],
            &["ibench", "input"]
        ),
        ["report::input::TargetResult", "report::ibench::build"]
    );
    let files = vec![
        vec!["report".to_string()],
        vec!["report".to_string(), "model".to_string()],
    ];
    let p: Vec<String> = ["report", "model", "Cell"]
        .iter()
        .map(|x| x.to_string())
        .collect();
    assert_eq!(file_of(&p, &files), Some(&files[1]));
}

/// The rooms import one way too: no room reaches back, through others, to a room that imports
/// it (spec once used the adapters and the server management, which read its targets). Test
/// files (`tests.rs`) are left out: a test may drive the room it checks from anywhere.
#[test]
fn the_rooms_import_one_way() {
    let mut edges: Vec<(String, String)> = Vec::new();
    for (m, to) in import_graph() {
        if m.is_empty() || m.last().is_some_and(|x| x == "tests") {
            continue;
        }
        for t in to {
            let (a, b) = (m[0].clone(), t.first().cloned().unwrap_or_default());
            if !b.is_empty() && a != b && !edges.contains(&(a.clone(), b.clone())) {
                edges.push((a, b));
            }
        }
    }
    assert!(
        edges.iter().any(|(a, b)| a == "session" && b == "dbms"),
        "the graph sees rooms: {edges:?}"
    );
    assert_eq!(room_circle(&edges), None);
    // The check finds a circle when there is one.
    let mut circled = edges.clone();
    circled.push(("dbms".into(), "session".into()));
    assert!(room_circle(&circled).is_some());
}

/// A circle among `edges` (room -> room it imports), as `a -> b -> a`; None when there is none.
fn room_circle(edges: &[(String, String)]) -> Option<String> {
    fn visit(
        at: &str,
        edges: &[(String, String)],
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Option<String> {
        if let Some(k) = path.iter().position(|p| p == at) {
            let mut c = path[k..].to_vec();
            c.push(at.to_string());
            return Some(c.join(" -> "));
        }
        if done.iter().any(|d| d == at) {
            return None;
        }
        path.push(at.to_string());
        for (_, b) in edges.iter().filter(|(a, _)| a == at) {
            if let Some(c) = visit(b, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.push(at.to_string());
        None
    }
    let mut done = Vec::new();
    for (a, _) in edges {
        if let Some(c) = visit(a, edges, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

/// Raw filesystem calls in `code` (comments, literals and test code blanked): `std::fs` and the
/// `fs::` calls made after importing it, `File::open`/`File::create`, `OpenOptions`,
/// `create_dir_all`, `remove_dir_all` and `set_permissions`. `symlink_metadata` (lstat, which
/// reads no bytes and follows no link at its end) is not counted, nor `std::os::unix::fs`.
fn raw_fs_calls(code: &str) -> Vec<String> {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(k) = code[at..].find("fs::") {
        let i = at + k;
        at = i + 4;
        let before = if i == 0 { b' ' } else { b[i - 1] };
        let std_fs = code[..i].ends_with("std::");
        if ident(before) || (before == b':' && !std_fs) {
            continue;
        }
        let name: String = code[i + 4..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // Calls only (`fs::read(`), not types (`fs::File`, counted at `File::open(`).
        let call = code[i + 4 + name.len()..].starts_with('(');
        if call && name != "symlink_metadata" {
            out.push(format!("fs::{name}"));
        }
    }
    // `use std::fs;` and `use std::fs::{...}`.
    for pat in ["std::fs;", "std::fs::{"] {
        out.extend(code.matches(pat).map(|_| "use std::fs".to_string()));
    }
    for pat in [
        "File::open(",
        "File::create(",
        "OpenOptions::new(",
        "create_dir_all(",
        "remove_dir_all(",
        "set_permissions(",
    ] {
        let n = code.matches(pat).count();
        // `fs::create_dir_all(` was counted above as an `fs::` call already.
        let counted = if ["create_dir_all(", "remove_dir_all("].contains(&pat) {
            code.matches(&format!("fs::{pat}")[..]).count()
        } else {
            0
        };
        out.extend(std::iter::repeat_n(
            pat.trim_end_matches('(').to_string(),
            n - counted,
        ));
    }
    out
}

/// Why a kernel interface is read directly.
const KERNEL: &str = "kernel interfaces (/proc, /sys, or a fixture tree of them) read by the \
                      host, metrics and process rooms: their cost is measured, and the sampler \
                      is not slowed by a gate";

/// Why a file dbperf just created, in a directory only it can write, is written or removed
/// directly.
const OWN_FILES: &str = "files and directories dbperf created in a directory that safe_fs \
                         checked (root's or the operator's, nobody else can write it); std's \
                         remove_dir_all never follows a link below its path";

/// The raw filesystem calls that stay outside the gate rooms (safe_fs, untrusted), with why
/// each is safe: (file under src/, how many, why). A new raw call fails the test: go through a
/// gate, or add it here with its reason and count.
const RAW_FS_ALLOWED: &[(&str, usize, &str)] = &[
    ("cli/host.rs", 1, "canonicalises the operator's --sysfs-root for a message"),
    ("dbms/sqlite.rs", 1, "the size of SQLite's own WAL in a work directory dbperf made"),
    ("fetch/apt.rs", 2, "lists /etc/apt/sources.list.d, root's own; its files are read through untrusted"),
    ("fetch/from.rs", 1, "whether the --from file exists, for the sentence; it is opened once, through untrusted"),
    ("history/import.rs", 2, "a result directory's names and its canonical path for the record; every file is read through untrusted"),
    ("host/aer.rs", 2, KERNEL),
    ("host/block.rs", 6, KERNEL),
    ("host/fixture.rs", 5, "writes a fixture sysfs/procfs tree into a directory a test made"),
    ("host/machine.rs", 3, KERNEL),
    ("host/mod.rs", 3, KERNEL),
    ("host/sysfs.rs", 6, KERNEL),
    ("host/tune.rs", 8, "kernel settings, each checked to stay under the sysfs/procfs root once links are resolved; its own state file in a directory safe_fs checked"),
    ("metrics/proc.rs", 11, KERNEL),
    ("profile/fold.rs", 4, OWN_FILES),
    ("profile/mod.rs", 3, "perf_event_paranoid (a kernel setting); a scratch directory of dbperf's own"),
    ("profile/record.rs", 12, "the profiled server's /proc/<pid>/task (a kernel interface); perf's data and log, created in a directory of dbperf's own"),
    ("report/input.rs", 4, "result directories' names; every file in them is read through untrusted"),
    ("results/mod.rs", 5, OWN_FILES),
    ("results/series.rs", 4, OWN_FILES),
    ("server/identity.rs", 6, KERNEL),
    ("server/layout.rs", 1, "lists /usr/lib/postgresql, root's own"),
    ("server/mod.rs", 10, OWN_FILES),
    ("server/postgres.rs", 1, "appends to postgresql.conf, which initdb made in the server's own data directory: never through a link or a second name"),
    ("server/process.rs", 3, "a log dbperf created in the instance's run directory; the local port range (a kernel setting)"),
    ("server/registry.rs", 4, "the registry directory safe_fs checked; its entries are read through safe_fs::acting_record"),
    ("server/secret.rs", 4, OWN_FILES),
    ("session/instance.rs", 2, OWN_FILES),
    ("session/mod.rs", 2, OWN_FILES),
    ("session/start.rs", 3, OWN_FILES),
    ("session/target.rs", 1, OWN_FILES),
];

/// The gate rooms: the only places raw filesystem calls need no reason.
const GATES: &[&str] = &["safe_fs/", "untrusted.rs"];

/// Outside bytes enter through gates only (docs/security.md): every raw filesystem call outside
/// safe_fs and untrusted is on `RAW_FS_ALLOWED` with its reason, so a new path cannot skip the
/// gates by accident.
#[test]
fn raw_filesystem_calls_stay_in_the_gates_or_say_why() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    let mut seen = Vec::new();
    for f in files_outside_tests() {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        if GATES.iter().any(|g| rel.starts_with(g)) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let calls = raw_fs_calls(&without_test_code(&blank_comments_and_literals(&text)));
        let allowed = RAW_FS_ALLOWED.iter().find(|(p, _, _)| *p == rel);
        match (calls.len(), allowed) {
            (0, None) => {}
            (n, Some((_, k, _))) if n == *k => seen.push(rel),
            (n, Some((_, k, _))) => wrong.push(format!(
                "{rel}: {n} raw filesystem calls, the allowlist says {k} ({calls:?}): go through \
                 safe_fs or untrusted, or change the count and say why"
            )),
            (n, None) => wrong.push(format!(
                "{rel}: {n} raw filesystem calls outside the gates ({calls:?}): go through safe_fs \
                 or untrusted, or add the file to RAW_FS_ALLOWED with its reason"
            )),
        }
    }
    for (p, _, why) in RAW_FS_ALLOWED {
        assert!(!why.trim().is_empty(), "{p} has no reason");
        if !seen.iter().any(|s| s == p) && !wrong.iter().any(|w| w.starts_with(p)) {
            wrong.push(format!(
                "{p} is on RAW_FS_ALLOWED but makes no raw calls: remove it"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_raw_call_scanner_sees_calls_not_types_or_other_modules() {
    let code = "use std::fs;\nfn f(x: fs::File) { fs::write(p, b)?; std::fs::remove_dir_all(d); \
                std::os::unix::fs::symlink(a, b); fs::symlink_metadata(p); \
                let f = File::open(p); OpenOptions::new(); rustix::fs::openat(d); }";
    assert_eq!(
        raw_fs_calls(code),
        [
            "fs::write",
            "fs::remove_dir_all",
            "use std::fs",
            "File::open",
            "OpenOptions::new"
        ]
    );
}

/// No byte stream from a server or a file decides how much is read: an unbounded `Keep` is no
/// longer constructed, and every `read_to_end`/`read_to_string` outside the gates reads through
/// a `take` in the same statement.
#[test]
fn every_whole_read_outside_the_gates_is_capped() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for f in files_outside_tests() {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        if GATES.iter().any(|g| rel.starts_with(g)) {
            continue;
        }
        let code = without_test_code(&blank_comments_and_literals(
            &std::fs::read_to_string(&f).unwrap(),
        ));
        if code.contains("rows: u64::MAX") {
            wrong.push(format!("{rel}: a Keep without a row cap"));
        }
        for pat in [".read_to_end(", ".read_to_string("] {
            let mut at = 0;
            while let Some(k) = code[at..].find(pat) {
                let i = at + k;
                at = i + pat.len();
                let start = code[..i].rfind([';', '{', '}']).map_or(0, |s| s + 1);
                if !code[start..i].contains(".take(") {
                    wrong.push(format!("{rel}: {pat} without a take() before it"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The most lines a file of a room held to `small_files_and_functions` may have.
const FILE_LINES_MAX: usize = 800;
/// The most lines one function (signature to closing brace) may have there.
const FUNCTION_LINES_MAX: usize = 120;
/// The rooms (or files) held to those limits: the server room, split into its flavors so that
/// no family's code swells the file the others share.
const SMALL: &[&str] = &["server", "session/instance.rs"];

/// Every function of `text` (comments and literals blanked) with its length in lines.
fn functions(text: &str) -> Vec<(String, usize)> {
    let code = blank_comments_and_literals(text);
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(k) = code[from..].find("fn ") {
        let at = from + k;
        from = at + 3;
        if at > 0 && is_ident(b[at - 1]) {
            continue;
        }
        let name = ident_at(&code, at + 3).to_string();
        // The body opens at the first `{` before any `;` (a trait's declaration has none).
        let Some(open) = code[at..].find(['{', ';']).map(|o| at + o) else {
            continue;
        };
        if b[open] != b'{' || name.is_empty() {
            continue;
        }
        let end = item_end(&code, open);
        let lines = code[at..end].matches('\n').count() + 1;
        out.push((name, lines));
    }
    out
}

/// Small files and functions where the brief asks for them: a file of `SMALL` over
/// `FILE_LINES_MAX` lines, or a function over `FUNCTION_LINES_MAX`, fails here (a server file
/// of a thousand lines once held both families' start-up side by side).
#[test]
fn small_files_and_functions() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for room in SMALL {
        let list = if room.ends_with(".rs") {
            vec![src.join(room)]
        } else {
            files(room)
        };
        for f in list {
            let rel = f.strip_prefix(&src).unwrap().display().to_string();
            let text = std::fs::read_to_string(&f).unwrap();
            let n = text.lines().count();
            if n > FILE_LINES_MAX {
                found.push(format!("{rel}: {n} lines (at most {FILE_LINES_MAX})"));
            }
            for (name, lines) in functions(&text) {
                if lines > FUNCTION_LINES_MAX {
                    found.push(format!(
                        "{rel}: fn {name} has {lines} lines (at most {FUNCTION_LINES_MAX})"
                    ));
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_function_scanner_sees_bodies_not_declarations() {
    let t = "trait T { fn a(&self); }\nfn b() {\n    let s = \"}\";\n}\nimpl X { fn c(&self) -> u8 { 1 } }\n";
    assert_eq!(functions(t), [("b".to_string(), 3), ("c".to_string(), 1)]);
}

/// Comparisons with an engine- or suite-shaped enum's variant (`engine == Engine::Sqlite`,
/// `matches!(e, Engine::MySql)`, `family() != Family::Postgres`) in `code` (comments, literals
/// and tests blanked): each decides for one variant and silently puts every other, a new one
/// too, on the other side.
fn variant_tests(code: &str) -> Vec<String> {
    const ENUMS: &[&str] = &["Engine::", "Family::", "SqlDialect::", "Suite::"];
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let squeezed: String = line
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace("crate::engines::", "")
            .replace("crate::suites::", "");
        for e in ENUMS {
            let compared = ["== ", "!= "]
                .iter()
                .any(|op| squeezed.contains(&format!("{op}{e}")))
                || squeezed.match_indices(e).any(|(at, _)| {
                    let rest = &squeezed[at + e.len()..];
                    let variant = ident_at(rest, 0);
                    let after = rest[variant.len()..].trim_start();
                    !variant.is_empty() && (after.starts_with("==") || after.starts_with("!="))
                })
                || (squeezed.contains("matches!(") && squeezed.contains(e));
            if compared {
                out.push(format!("{}: {}", n + 1, line.trim()));
            }
        }
    }
    out
}

/// Files that still compare engine variants, how many lines, and why each is left: they are
/// another change's files today, and each is one `match` or registry field away.
const VARIANT_TESTS_KNOWN: &[(&str, usize, &str)] = &[
    (
        "spec/target.rs",
        2,
        "MyRocks is the MySQL family's; the null target has no build or storage",
    ),
    (
        "cli/writeamp.rs",
        2,
        "offers the MySQL family's engines: a filter, every new one of the family included",
    ),
];

/// A decision on an engine is a `match` (which fails to compile where a new engine needs one)
/// or a registry field, never a comparison with one variant outside the registry.
#[test]
fn engines_are_not_compared_by_variant() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for f in files_outside_tests() {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        if rel == "engines.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let found = variant_tests(&without_test_code(&blank_comments_and_literals(&text)));
        let known = VARIANT_TESTS_KNOWN.iter().find(|(p, _, _)| *p == rel);
        match (found.len(), known) {
            (0, None) => {}
            (n, Some((_, k, _))) if n == *k => {}
            (_, _) => wrong.push(format!("{rel}:\n  {}", found.join("\n  "))),
        }
    }
    assert!(
        wrong.is_empty(),
        "engine or suite variants compared outside the registry (use a match or a registry field):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_variant_scanner_sees_comparisons() {
    assert_eq!(
        variant_tests("if kind == Engine::MySql && maria {").len(),
        1
    );
    assert_eq!(variant_tests("let pg = Engine::Postgres != e;").len(), 1);
    assert_eq!(
        variant_tests("matches!(e.family(), Family::MySql)").len(),
        1
    );
    assert!(variant_tests("match e { Engine::MySql => 1, Engine::Sqlite => 2 }").is_empty());
    assert!(variant_tests("let e = Engine::parse(name);").is_empty());
    assert_eq!(variant_tests("if s.suite == Suite::Tpcc {").len(), 1);
    assert!(variant_tests("match s.suite { Suite::Tpcc => 1, _ => 2 }").is_empty());
    assert_eq!(
        variant_tests("f() == crate::engines::Family::MySql").len(),
        1
    );
}
