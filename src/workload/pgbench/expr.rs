//! pgbench 15's expression language (`\set`, `\if`, `\elif`): the grammar of its exprparse.y
//! and exprscan.l by recursive descent, with the same precedence (lowest first: OR, AND, NOT,
//! IS/ISNULL/NOTNULL, comparisons, bitwise operators, + -, * / %, unary + - ~) and the same
//! rewrites (`a > b` is `b < a`, `-x` is `0 - x`, `~x` is `-1 # x`, `hash(x)` is
//! `hash(x, :default_seed)`). Hand-written rather than generated: the grammar is one screen,
//! and a parser crate would add a dependency and a second grammar notation for it; errors say
//! what was expected where, in one sentence.

use std::collections::HashMap;

/// Variables by name, numbered in the order scripts first name them: a client keeps their
/// values in a vector, and an expression or SQL command refers to a slot, not a name.
#[derive(Debug, Clone, Default)]
pub struct Symbols {
    slots: HashMap<String, usize>,
    names: Vec<String>,
}

impl Symbols {
    pub fn slot(&mut self, name: &str) -> usize {
        if let Some(&s) = self.slots.get(name) {
            return s;
        }
        self.names.push(name.to_string());
        self.slots.insert(name.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }

    pub fn find(&self, name: &str) -> Option<usize> {
        self.slots.get(name).copied()
    }

    pub fn name(&self, slot: usize) -> &str {
        &self.names[slot]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Every function and operator, as pgbench's PgBenchFunction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Abs,
    Least,
    Greatest,
    Debug,
    Pi,
    Sqrt,
    Ln,
    Exp,
    Int,
    Double,
    Random,
    RandomGaussian,
    RandomExponential,
    RandomZipfian,
    Pow,
    And,
    Or,
    Not,
    BitAnd,
    BitOr,
    BitXor,
    Lshift,
    Rshift,
    Eq,
    Ne,
    Le,
    Lt,
    Is,
    Case,
    HashMurmur2,
    HashFnv1a,
    Permute,
}

/// How many arguments a function takes.
enum Arity {
    Exactly(usize),
    AtLeastOne,
    /// The value and an optional seed (`:default_seed` when left out).
    Seeded(usize),
}

/// The functions a script may call by name (case-insensitive), as pgbench's table.
const NAMED: &[(&str, Func, Arity)] = &[
    ("abs", Func::Abs, Arity::Exactly(1)),
    ("least", Func::Least, Arity::AtLeastOne),
    ("greatest", Func::Greatest, Arity::AtLeastOne),
    ("debug", Func::Debug, Arity::Exactly(1)),
    ("pi", Func::Pi, Arity::Exactly(0)),
    ("sqrt", Func::Sqrt, Arity::Exactly(1)),
    ("ln", Func::Ln, Arity::Exactly(1)),
    ("exp", Func::Exp, Arity::Exactly(1)),
    ("int", Func::Int, Arity::Exactly(1)),
    ("double", Func::Double, Arity::Exactly(1)),
    ("random", Func::Random, Arity::Exactly(2)),
    ("random_gaussian", Func::RandomGaussian, Arity::Exactly(3)),
    (
        "random_exponential",
        Func::RandomExponential,
        Arity::Exactly(3),
    ),
    ("random_zipfian", Func::RandomZipfian, Arity::Exactly(3)),
    ("pow", Func::Pow, Arity::Exactly(2)),
    ("power", Func::Pow, Arity::Exactly(2)),
    ("mod", Func::Mod, Arity::Exactly(2)),
    ("hash", Func::HashMurmur2, Arity::Seeded(1)),
    ("hash_murmur2", Func::HashMurmur2, Arity::Seeded(1)),
    ("hash_fnv1a", Func::HashFnv1a, Arity::Seeded(1)),
    ("permute", Func::Permute, Arity::Seeded(2)),
];

/// A value of the language (its operations are in `eval`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Const(Value),
    Var(usize),
    Call(Func, Vec<Expr>),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i64),
    /// 9223372036854775808, which only `-` before it makes a bigint.
    MinMagnitude,
    Double(f64),
    Bool(bool),
    Null,
    Var(String),
    Ident(String),
    Sym(&'static str),
    Kw(Kw),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kw {
    And,
    Or,
    Not,
    Is,
    IsNull,
    NotNull,
    Case,
    When,
    Then,
    Else,
    End,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || !c.is_ascii()
}

fn is_ident(c: char) -> bool {
    is_ident_start(c) || c.is_ascii_digit()
}

fn keyword(word: &str) -> Option<Tok> {
    Some(match word.to_ascii_lowercase().as_str() {
        "and" => Tok::Kw(Kw::And),
        "or" => Tok::Kw(Kw::Or),
        "not" => Tok::Kw(Kw::Not),
        "is" => Tok::Kw(Kw::Is),
        "isnull" => Tok::Kw(Kw::IsNull),
        "notnull" => Tok::Kw(Kw::NotNull),
        "case" => Tok::Kw(Kw::Case),
        "when" => Tok::Kw(Kw::When),
        "then" => Tok::Kw(Kw::Then),
        "else" => Tok::Kw(Kw::Else),
        "end" => Tok::Kw(Kw::End),
        "null" => Tok::Null, // a value's name, not an engine
        "true" => Tok::Bool(true),
        "false" => Tok::Bool(false),
        _ => return None,
    })
}

/// The tokens of `src`, or a sentence saying what is wrong where.
fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let (tok, n) = number(&chars[i..])?;
            out.push(tok);
            i += n;
            continue;
        }
        if c == ':' {
            let n = chars[i + 1..]
                .iter()
                .position(|&c| !is_ident(c))
                .unwrap_or(chars.len() - i - 1);
            if n == 0 || !is_ident_start(chars[i + 1]) {
                return Err("a ':' not followed by a variable name".into());
            }
            out.push(Tok::Var(chars[i + 1..i + 1 + n].iter().collect()));
            i += 1 + n;
            continue;
        }
        if is_ident_start(c) {
            let n = chars[i..]
                .iter()
                .position(|&c| !is_ident(c))
                .unwrap_or(chars.len() - i);
            let word: String = chars[i..i + n].iter().collect();
            out.push(keyword(&word).unwrap_or(Tok::Ident(word)));
            i += n;
            continue;
        }
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        let sym = ["<=", ">=", "<>", "!=", "<<", ">>"]
            .into_iter()
            .find(|s| *s == two);
        if let Some(s) = sym {
            out.push(Tok::Sym(if s == "!=" { "<>" } else { s }));
            i += 2;
            continue;
        }
        match SYMS.iter().find(|x| x.starts_with(c)) {
            Some(s) => out.push(Tok::Sym(s)),
            None => return Err(format!("unexpected character {c:?}")),
        }
        i += 1;
    }
    Ok(out)
}

const SYMS: [&str; 15] = [
    "(", ")", "+", "-", "*", "/", "%", "<", ">", "=", "&", "|", "#", "~", ",",
];

/// An integer or double constant at the start of `c`; the characters it took.
fn number(c: &[char]) -> Result<(Tok, usize), String> {
    let digits = |from: usize| c[from..].iter().take_while(|d| d.is_ascii_digit()).count();
    let mut n = digits(0);
    let mut double = false;
    if c.get(n) == Some(&'.') {
        double = true;
        n += 1 + digits(n + 1);
    }
    if matches!(c.get(n), Some('e' | 'E')) {
        let sign = matches!(c.get(n + 1), Some('+' | '-')) as usize;
        let e = digits(n + 1 + sign);
        if e > 0 {
            double = true;
            n += 1 + sign + e;
        }
    }
    let text: String = c[..n].iter().collect();
    if double {
        return text
            .parse()
            .map(|d| (Tok::Double(d), n))
            .map_err(|_| format!("invalid number {text}"));
    }
    match text.parse::<i64>() {
        Ok(v) => Ok((Tok::Int(v), n)),
        Err(_) if text == "9223372036854775808" => Ok((Tok::MinMagnitude, n)),
        Err(_) => Err(format!("bigint constant overflow: {text}")),
    }
}

struct Parser<'a> {
    toks: Vec<Tok>,
    at: usize,
    symbols: &'a mut Symbols,
}

/// Parses one expression, interning its variables in `symbols`.
pub fn parse(src: &str, symbols: &mut Symbols) -> Result<Expr, String> {
    let toks = lex(src)?;
    if toks.is_empty() {
        return Err("an expression is missing".into());
    }
    let mut p = Parser {
        toks,
        at: 0,
        symbols,
    };
    let e = p.or()?;
    match p.peek() {
        None => Ok(e),
        Some(t) => Err(format!("unexpected {} after the expression", shown(t))),
    }
}

fn shown(t: &Tok) -> String {
    match t {
        Tok::Int(v) => v.to_string(),
        Tok::MinMagnitude => "9223372036854775808".into(),
        Tok::Double(d) => d.to_string(),
        Tok::Bool(b) => b.to_string(),
        Tok::Null => "NULL".into(),
        Tok::Var(v) => format!(":{v}"),
        Tok::Ident(w) => w.clone(),
        Tok::Sym(s) => format!("'{s}'"),
        Tok::Kw(k) => format!("{k:?}").to_uppercase(),
    }
}

fn call(f: Func, args: Vec<Expr>) -> Expr {
    Expr::Call(f, args)
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn eat_sym(&mut self, s: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Sym(x)) if *x == s) {
            self.at += 1;
            return true;
        }
        false
    }

    fn eat_kw(&mut self, k: Kw) -> bool {
        if self.peek() == Some(&Tok::Kw(k)) {
            self.at += 1;
            return true;
        }
        false
    }

    fn expect_sym(&mut self, s: &str) -> Result<(), String> {
        if self.eat_sym(s) {
            return Ok(());
        }
        Err(match self.peek() {
            Some(t) => format!("expected '{s}', found {}", shown(t)),
            None => format!("expected '{s}' at the end"),
        })
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut l = self.and()?;
        while self.eat_kw(Kw::Or) {
            l = call(Func::Or, vec![l, self.and()?]);
        }
        Ok(l)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut l = self.not()?;
        while self.eat_kw(Kw::And) {
            l = call(Func::And, vec![l, self.not()?]);
        }
        Ok(l)
    }

    fn not(&mut self) -> Result<Expr, String> {
        if self.eat_kw(Kw::Not) {
            return Ok(call(Func::Not, vec![self.not()?]));
        }
        self.is()
    }

    /// The postfix IS forms, at most one (they do not associate).
    fn is(&mut self) -> Result<Expr, String> {
        let e = self.comparison()?;
        let is_null = |e: Expr| call(Func::Is, vec![e, Expr::Const(Value::Null)]);
        if self.eat_kw(Kw::IsNull) {
            return Ok(is_null(e));
        }
        if self.eat_kw(Kw::NotNull) {
            return Ok(call(Func::Not, vec![is_null(e)]));
        }
        if !self.eat_kw(Kw::Is) {
            return Ok(e);
        }
        let negated = self.eat_kw(Kw::Not);
        let against = match self.peek() {
            Some(Tok::Null) => Value::Null,
            Some(Tok::Bool(b)) => Value::Bool(*b),
            _ => return Err("IS must be followed by NULL, TRUE or FALSE".into()),
        };
        self.at += 1;
        let test = call(Func::Is, vec![e, Expr::Const(against)]);
        Ok(if negated {
            call(Func::Not, vec![test])
        } else {
            test
        })
    }

    /// One comparison at most: they do not associate either.
    fn comparison(&mut self) -> Result<Expr, String> {
        let l = self.bitwise()?;
        let op = match self.peek() {
            Some(Tok::Sym(s)) if ["<", ">", "=", "<=", ">=", "<>"].contains(s) => *s,
            _ => return Ok(l),
        };
        self.at += 1;
        let r = self.bitwise()?;
        Ok(match op {
            "<" => call(Func::Lt, vec![l, r]),
            ">" => call(Func::Lt, vec![r, l]),
            "<=" => call(Func::Le, vec![l, r]),
            ">=" => call(Func::Le, vec![r, l]),
            "=" => call(Func::Eq, vec![l, r]),
            _ => call(Func::Ne, vec![l, r]),
        })
    }

    fn bitwise(&mut self) -> Result<Expr, String> {
        let mut l = self.additive()?;
        loop {
            let f = match self.peek() {
                Some(Tok::Sym("&")) => Func::BitAnd,
                Some(Tok::Sym("|")) => Func::BitOr,
                Some(Tok::Sym("#")) => Func::BitXor,
                Some(Tok::Sym("<<")) => Func::Lshift,
                Some(Tok::Sym(">>")) => Func::Rshift,
                _ => return Ok(l),
            };
            self.at += 1;
            l = call(f, vec![l, self.additive()?]);
        }
    }

    fn additive(&mut self) -> Result<Expr, String> {
        let mut l = self.multiplicative()?;
        loop {
            let f = match self.peek() {
                Some(Tok::Sym("+")) => Func::Add,
                Some(Tok::Sym("-")) => Func::Sub,
                _ => return Ok(l),
            };
            self.at += 1;
            l = call(f, vec![l, self.multiplicative()?]);
        }
    }

    fn multiplicative(&mut self) -> Result<Expr, String> {
        let mut l = self.unary()?;
        loop {
            let f = match self.peek() {
                Some(Tok::Sym("*")) => Func::Mul,
                Some(Tok::Sym("/")) => Func::Div,
                Some(Tok::Sym("%")) => Func::Mod,
                _ => return Ok(l),
            };
            self.at += 1;
            l = call(f, vec![l, self.unary()?]);
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat_sym("+") {
            return self.unary();
        }
        if self.eat_sym("-") {
            if self.peek() == Some(&Tok::MinMagnitude) {
                self.at += 1;
                return Ok(Expr::Const(Value::Int(i64::MIN)));
            }
            return Ok(call(
                Func::Sub,
                vec![Expr::Const(Value::Int(0)), self.unary()?],
            ));
        }
        // `~` binds as the bitwise operators do (its token's precedence in pgbench's grammar):
        // `~a + 1` is `~(a + 1)`, `~a | b` is `(~a) | b`.
        if self.eat_sym("~") {
            return Ok(call(
                Func::BitXor,
                vec![Expr::Const(Value::Int(-1)), self.additive()?],
            ));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let Some(t) = self.peek().cloned() else {
            return Err("the expression ends where a value was expected".into());
        };
        self.at += 1;
        match t {
            Tok::Int(v) => Ok(Expr::Const(Value::Int(v))),
            Tok::MinMagnitude => Err("bigint constant overflow: 9223372036854775808".into()),
            Tok::Double(d) => Ok(Expr::Const(Value::Double(d))),
            Tok::Bool(b) => Ok(Expr::Const(Value::Bool(b))),
            Tok::Null => Ok(Expr::Const(Value::Null)),
            Tok::Var(v) => Ok(Expr::Var(self.symbols.slot(&v))),
            Tok::Sym("(") => {
                let e = self.or()?;
                self.expect_sym(")")?;
                Ok(e)
            }
            Tok::Ident(name) => self.function(&name),
            Tok::Kw(Kw::Case) => self.case(),
            other => Err(format!("unexpected {}", shown(&other))),
        }
    }

    fn function(&mut self, name: &str) -> Result<Expr, String> {
        let Some((_, f, arity)) = NAMED.iter().find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        else {
            return Err(format!("unexpected function name {name}"));
        };
        self.expect_sym("(")?;
        let mut args = Vec::new();
        if !self.eat_sym(")") {
            loop {
                args.push(self.or()?);
                if self.eat_sym(")") {
                    break;
                }
                self.expect_sym(",")?;
            }
        }
        let n = args.len();
        match arity {
            Arity::Exactly(k) if n != *k => {
                return Err(format!("{name} takes {k} argument(s), {n} given"))
            }
            Arity::AtLeastOne if n == 0 => {
                return Err(format!("{name} takes at least one argument"))
            }
            Arity::Seeded(k) if n == *k => args.push(Expr::Var(self.symbols.slot("default_seed"))),
            Arity::Seeded(k) if n != k + 1 => {
                return Err(format!(
                    "{name} takes {k} or {} arguments, {n} given",
                    k + 1
                ))
            }
            _ => {}
        }
        Ok(call(*f, args))
    }

    /// CASE WHEN c THEN v [WHEN ...] [ELSE e] END: the arguments c1, v1, c2, v2, ..., else
    /// (NULL when left out).
    fn case(&mut self) -> Result<Expr, String> {
        let mut args = Vec::new();
        while self.eat_kw(Kw::When) {
            args.push(self.or()?);
            if !self.eat_kw(Kw::Then) {
                return Err("CASE ... WHEN needs THEN".into());
            }
            args.push(self.or()?);
        }
        if args.is_empty() {
            return Err("CASE needs at least one WHEN".into());
        }
        let otherwise = if self.eat_kw(Kw::Else) {
            self.or()?
        } else {
            Expr::Const(Value::Null)
        };
        args.push(otherwise);
        if !self.eat_kw(Kw::End) {
            return Err("CASE needs END".into());
        }
        Ok(call(Func::Case, args))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Expr {
        parse(s, &mut Symbols::default()).unwrap()
    }

    fn i(v: i64) -> Expr {
        Expr::Const(Value::Int(v))
    }

    #[test]
    fn precedence_is_pgbenchs() {
        assert_eq!(
            p("1 + 2 * 3"),
            call(Func::Add, vec![i(1), call(Func::Mul, vec![i(2), i(3)])])
        );
        assert_eq!(p("3 > 2"), call(Func::Lt, vec![i(2), i(3)]));
        assert_eq!(
            p("-2 * 3"),
            call(Func::Mul, vec![call(Func::Sub, vec![i(0), i(2)]), i(3)])
        );
        assert_eq!(
            p("1 | 2 + 3"),
            call(Func::BitOr, vec![i(1), call(Func::Add, vec![i(2), i(3)])])
        );
        assert_eq!(
            p("NOT 1 = 2"),
            call(Func::Not, vec![call(Func::Eq, vec![i(1), i(2)])])
        );
        assert_eq!(p("-9223372036854775808"), i(i64::MIN));
        assert_eq!(p("1.5e3"), Expr::Const(Value::Double(1500.0)));
    }

    #[test]
    fn hash_and_permute_take_the_default_seed_when_left_out() {
        let mut s = Symbols::default();
        let e = parse("hash(5)", &mut s).unwrap();
        let seed = s.find("default_seed").unwrap();
        assert_eq!(e, call(Func::HashMurmur2, vec![i(5), Expr::Var(seed)]));
        let e = parse("PERMUTE(1, 10)", &mut s).unwrap();
        assert_eq!(e, call(Func::Permute, vec![i(1), i(10), Expr::Var(seed)]));
    }

    #[test]
    fn bad_expressions_say_what_is_wrong() {
        let mut s = Symbols::default();
        for (src, says) in [
            ("1 +", "ends where a value"),
            ("nosuch(1)", "unexpected function name nosuch"),
            ("random(1)", "random takes 2"),
            ("1 < 2 < 3", "unexpected '<'"),
            ("(1", "expected ')'"),
            ("CASE WHEN 1 THEN 2", "CASE needs END"),
            ("99999999999999999999", "overflow"),
            ("", "missing"),
            ("1 $ 2", "unexpected character"),
        ] {
            let e = parse(src, &mut s).unwrap_err();
            assert!(e.contains(says), "{src}: {e}");
        }
    }
}
