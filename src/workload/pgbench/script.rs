//! A pgbench script (a built-in's text or the user's file) read into commands, as pgbench 15's
//! ParseScript does: SQL commands end at a semicolon outside quotes and comments (and include
//! it, as pgbench sends them); a line starting with a backslash is a meta command (`\set`,
//! `\sleep`, `\if`/`\elif`/`\else`/`\endif`, `\gset`/`\aset` after an SQL command); `\set`
//! continues onto the next line after a trailing backslash. Anything dbperf cannot run is
//! refused here, naming the file and line, before anything runs: `\shell` and `\setshell`
//! (dbperf may run as root: a script does not run commands) and the pipeline commands.

use super::expr::{self, Expr, Symbols};

/// A piece of an SQL command: text as written, or a `:name` to put a variable's value in.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Text(String),
    Var { slot: usize, name: String },
}

/// Where the rows of an SQL command go.
#[derive(Debug, Clone, PartialEq)]
pub struct Gset {
    /// `\aset`: every row's columns (the last row wins); `\gset`: exactly one row.
    pub all: bool,
    /// The variables, in the select list's order, prefix included.
    pub columns: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Sleep {
    Micros(u64),
    Var { slot: usize, per_unit: u64 },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Sql {
        parts: Vec<Part>,
        gset: Option<Gset>,
    },
    Set {
        slot: usize,
        expr: Expr,
    },
    Sleep(Sleep),
    /// `\if`: when false, go on at `next` (the chain's next `\elif`, `\else` or `\endif`).
    If {
        expr: Expr,
        next: usize,
    },
    /// Reached in order (a branch above ran): go on after `end`. Jumped to: test `expr`.
    Elif {
        expr: Expr,
        next: usize,
        end: usize,
    },
    Else {
        end: usize,
    },
    Endif,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// 1-based line in its script where it starts.
    pub line: usize,
    /// What per-statement figures call it: its first line, as pgbench -r prints it.
    pub text: String,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// The built-in's name or the file's path, for reports and errors.
    pub name: String,
    pub weight: u64,
    pub commands: Vec<Command>,
}

/// The most commands a script may have: a file of millions is a mistake, not a benchmark.
pub const MOST_COMMANDS: usize = 10_000;

/// Reads `text` (the script `name`) into commands, variables named in `symbols`. The error is
/// one sentence naming the script and the line.
pub fn parse(name: &str, weight: u64, text: &str, symbols: &mut Symbols) -> Result<Script, String> {
    let mut p = Reader {
        name,
        symbols,
        out: Vec::new(),
        sql: String::new(),
        sql_line: 0,
        open: Vec::new(),
    };
    p.read(text)?;
    if let Some(&(at, _)) = p.open.last() {
        let line = p.out[at].line;
        return Err(format!("{name}:{line}: \\if without a matching \\endif"));
    }
    if p.out.is_empty() {
        return Err(format!("{name}: the script has no commands"));
    }
    if p.out.len() > MOST_COMMANDS {
        return Err(format!(
            "{name}: the script has more than {MOST_COMMANDS} commands"
        ));
    }
    Ok(Script {
        name: name.to_string(),
        weight,
        commands: p.out,
    })
}

struct Reader<'a> {
    name: &'a str,
    symbols: &'a mut Symbols,
    out: Vec<Command>,
    /// The SQL command under way (it may span lines).
    sql: String,
    sql_line: usize,
    /// Open `\if`s: (the command's index, the last branch of its chain so far).
    open: Vec<(usize, usize)>,
}

/// Where an SQL scan stands between characters.
#[derive(Debug, Clone, Copy, PartialEq)]
enum In {
    Code,
    Single,
    Double,
    Block(u32),
}

impl Reader<'_> {
    fn err(&self, line: usize, what: impl std::fmt::Display) -> String {
        format!("{}:{line}: {what}", self.name)
    }

    fn read(&mut self, text: &str) -> Result<(), String> {
        let lines: Vec<&str> = text.lines().collect();
        let mut state = In::Code;
        let mut i = 0;
        while i < lines.len() {
            let line_no = i + 1;
            let line = lines[i];
            i += 1;
            if state == In::Code
                && self.sql.trim().is_empty()
                && line.trim_start().starts_with('\\')
            {
                let mut meta = line.trim_start().to_string();
                // `\set` (and the others) continue after a trailing backslash.
                while meta.ends_with('\\') && i < lines.len() {
                    meta.pop();
                    meta.push(' ');
                    meta.push_str(lines[i]);
                    i += 1;
                }
                self.meta(line_no, &meta)?;
                continue;
            }
            state = self.sql_line_scan(line_no, line, state)?;
        }
        if !self.sql.trim().is_empty() {
            self.end_sql();
        }
        Ok(())
    }

    /// Adds one line to the SQL command under way, ending commands at top-level semicolons; a
    /// backslash at top level ends the SQL and starts a meta command on the rest of the line.
    fn sql_line_scan(&mut self, line_no: usize, line: &str, mut state: In) -> Result<In, String> {
        let chars: Vec<char> = line.chars().collect();
        let mut j = 0;
        while j < chars.len() {
            let c = chars[j];
            let next = chars.get(j + 1).copied();
            if self.sql.trim().is_empty() && state == In::Code {
                if c.is_whitespace() {
                    j += 1;
                    continue;
                }
                if c == '-' && next == Some('-') {
                    return Ok(state);
                }
                self.sql.clear();
                self.sql_line = line_no;
            }
            match state {
                In::Code => match c {
                    '\'' => state = In::Single,
                    '"' => state = In::Double,
                    '-' if next == Some('-') => {
                        self.sql.extend(&chars[j..]);
                        break;
                    }
                    '/' if next == Some('*') => {
                        state = In::Block(1);
                        self.sql.push_str("/*");
                        j += 2;
                        continue;
                    }
                    '\\' if next == Some(';') => {
                        self.sql.push(';');
                        j += 2;
                        continue;
                    }
                    '\\' => {
                        self.end_sql();
                        let rest: String = chars[j..].iter().collect();
                        self.meta(line_no, &rest)?;
                        return Ok(In::Code);
                    }
                    ';' => {
                        self.sql.push(';');
                        self.end_sql();
                        j += 1;
                        continue;
                    }
                    _ => {}
                },
                In::Single if c == '\'' => state = In::Code,
                In::Double if c == '"' => state = In::Code,
                In::Block(d) if c == '*' && next == Some('/') => {
                    state = if d == 1 { In::Code } else { In::Block(d - 1) };
                    self.sql.push_str("*/");
                    j += 2;
                    continue;
                }
                In::Block(d) if c == '/' && next == Some('*') => {
                    state = In::Block(d + 1);
                    self.sql.push_str("/*");
                    j += 2;
                    continue;
                }
                _ => {}
            }
            self.sql.push(c);
            j += 1;
        }
        if !self.sql.trim().is_empty() {
            self.sql.push('\n');
        }
        Ok(state)
    }

    /// The SQL command under way, split into text and variables.
    fn end_sql(&mut self) {
        let sql = std::mem::take(&mut self.sql);
        let sql = sql.trim_end_matches('\n').to_string();
        if sql.trim().is_empty() {
            return;
        }
        let parts = split_vars(&sql, self.symbols);
        self.out.push(Command {
            line: self.sql_line,
            text: sql.lines().next().unwrap_or_default().trim().to_string(),
            kind: Kind::Sql { parts, gset: None },
        });
    }

    fn meta(&mut self, line: usize, text: &str) -> Result<(), String> {
        let body = text.trim_start_matches('\\');
        let mut words = body.split_whitespace();
        let word = words.next().unwrap_or_default().to_ascii_lowercase();
        let args: Vec<&str> = words.collect();
        let rest = body
            .trim_start()
            .get(word.len()..)
            .unwrap_or_default()
            .trim();
        let kind = match word.as_str() {
            "set" => self.set(line, rest)?,
            "sleep" => self.sleep(line, &args)?,
            "if" => Kind::If {
                expr: self.expr(line, rest)?,
                next: 0,
            },
            "elif" => Kind::Elif {
                expr: self.expr(line, rest)?,
                next: 0,
                end: 0,
            },
            "else" => Kind::Else { end: 0 },
            "endif" => Kind::Endif,
            "gset" | "aset" => return self.gset(line, word == "aset", &args),
            "shell" | "setshell" => {
                return Err(self.err(
                    line,
                    format!(
                        "\\{word} is refused: dbperf may run as root, and a script does not \
                         run commands"
                    ),
                ))
            }
            "startpipeline" | "syncpipeline" | "endpipeline" => {
                return Err(self.err(
                    line,
                    format!("\\{word}: dbperf does not run pipelines (docs/pgbench.md)"),
                ))
            }
            other => {
                return Err(self.err(
                    line,
                    format!("invalid command \\{}", crate::untrusted::shown(other)),
                ))
            }
        };
        let at = self.out.len();
        self.out.push(Command {
            line,
            text: text.trim().to_string(),
            kind,
        });
        self.link(line, at)
    }

    fn expr(&mut self, line: usize, src: &str) -> Result<Expr, String> {
        expr::parse(src, self.symbols).map_err(|e| self.err(line, e))
    }

    fn set(&mut self, line: usize, rest: &str) -> Result<Kind, String> {
        let (name, src) = rest
            .split_once(char::is_whitespace)
            .ok_or_else(|| self.err(line, "\\set needs a variable name and an expression"))?;
        if !valid_name(name) {
            return Err(self.err(
                line,
                format!("invalid variable name {}", crate::untrusted::shown(name)),
            ));
        }
        let expr = self.expr(line, src)?;
        Ok(Kind::Set {
            slot: self.symbols.slot(name),
            expr,
        })
    }

    fn sleep(&mut self, line: usize, args: &[&str]) -> Result<Kind, String> {
        let per_unit = match args.get(1).map(|u| u.to_ascii_lowercase()) {
            None => 1_000_000,
            Some(u) if u == "s" => 1_000_000,
            Some(u) if u == "ms" => 1_000,
            Some(u) if u == "us" => 1,
            Some(u) => {
                return Err(self.err(
                    line,
                    format!(
                        "\\sleep's unit must be us, ms or s, not {}",
                        crate::untrusted::shown(&u)
                    ),
                ))
            }
        };
        if args.is_empty() || args.len() > 2 {
            return Err(self.err(line, "\\sleep takes an amount and an optional unit"));
        }
        if let Some(name) = args[0].strip_prefix(':') {
            return Ok(Kind::Sleep(Sleep::Var {
                slot: self.symbols.slot(name),
                per_unit,
            }));
        }
        let n: u64 = args[0].parse().map_err(|_| {
            self.err(
                line,
                format!(
                    "\\sleep's amount must be a whole number or a :variable, not {}",
                    crate::untrusted::shown(args[0])
                ),
            )
        })?;
        Ok(Kind::Sleep(Sleep::Micros(n.saturating_mul(per_unit))))
    }

    /// `\gset [prefix]` or `\aset [prefix]` on the SQL command just before it.
    fn gset(&mut self, line: usize, all: bool, args: &[&str]) -> Result<(), String> {
        let what = if all { "\\aset" } else { "\\gset" };
        let prefix = args.first().copied().unwrap_or("");
        if args.len() > 1 || !(prefix.is_empty() || valid_name(prefix)) {
            return Err(self.err(line, format!("{what} takes at most one prefix, a name")));
        }
        let Some(Command {
            kind: Kind::Sql { parts, gset },
            ..
        }) = self.out.last_mut()
        else {
            return Err(self.err(line, format!("{what} must follow an SQL command")));
        };
        if gset.is_some() {
            return Err(self.err(line, format!("{what} must follow an SQL command")));
        }
        let sql: String = parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => t.clone(),
                Part::Var { name, .. } => format!(":{name}"),
            })
            .collect();
        let names = super::columns::select_names(&sql)
            .map_err(|e| format!("{}:{line}: {what}: {e}", self.name))?;
        let columns = names
            .iter()
            .map(|n| self.symbols.slot(&format!("{prefix}{n}")))
            .collect();
        if let Some(Command {
            kind: Kind::Sql { gset, .. },
            ..
        }) = self.out.last_mut()
        {
            *gset = Some(Gset { all, columns });
        }
        Ok(())
    }

    /// Links a conditional into its chain (`\if` ... `\elif` ... `\else` ... `\endif`).
    fn link(&mut self, line: usize, at: usize) -> Result<(), String> {
        let point = |k: &mut Kind, to: usize| match k {
            Kind::If { next, .. } | Kind::Elif { next, .. } => *next = to,
            _ => {}
        };
        match self.out[at].kind {
            Kind::If { .. } => self.open.push((at, at)),
            Kind::Elif { .. } | Kind::Else { .. } => {
                let Some(&(start, last)) = self.open.last() else {
                    return Err(self.err(line, "\\elif or \\else without a matching \\if"));
                };
                if matches!(self.out[last].kind, Kind::Else { .. }) {
                    return Err(self.err(line, "\\elif or \\else after \\else"));
                }
                point(&mut self.out[last].kind, at);
                *self.open.last_mut().unwrap() = (start, at);
            }
            Kind::Endif => {
                let Some((start, last)) = self.open.pop() else {
                    return Err(self.err(line, "\\endif without a matching \\if"));
                };
                point(&mut self.out[last].kind, at);
                // Every branch after the first ends at this \endif.
                for k in start..at {
                    match &mut self.out[k].kind {
                        Kind::Elif { end, .. } | Kind::Else { end } if *end == 0 => *end = at,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// pgbench's valid_variable_name: a letter, `_` or a non-ASCII byte, then those or digits.
pub fn valid_name(name: &str) -> bool {
    let mut c = name.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_' || !f.is_ascii())
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_' || !x.is_ascii())
}

/// The SQL split at each `:name` (pgbench's parseVariable: `::` is left alone, as a cast).
fn split_vars(sql: &str, symbols: &mut Symbols) -> Vec<Part> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = sql;
    while let Some(at) = rest.find(':') {
        text.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(stripped) = after.strip_prefix(':') {
            // `::type`: both colons kept, nothing substituted.
            text.push_str("::");
            rest = stripped.trim_start_matches(':');
            let extra = stripped.len() - rest.len();
            text.push_str(&":".repeat(extra));
            continue;
        }
        let n = after
            .char_indices()
            .find(|&(i, c)| {
                !(c.is_ascii_alphabetic()
                    || c == '_'
                    || !c.is_ascii()
                    || (i > 0 && c.is_ascii_digit()))
            })
            .map_or(after.len(), |(i, _)| i);
        if n == 0 {
            text.push(':');
            rest = after;
            continue;
        }
        if !text.is_empty() {
            out.push(Part::Text(std::mem::take(&mut text)));
        }
        let name = &after[..n];
        out.push(Part::Var {
            slot: symbols.slot(name),
            name: name.to_string(),
        });
        rest = &after[n..];
    }
    text.push_str(rest);
    if !text.is_empty() {
        out.push(Part::Text(text));
    }
    out
}

#[cfg(test)]
#[path = "script_tests.rs"]
mod tests;
