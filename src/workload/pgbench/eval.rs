//! Evaluating pgbench expressions with pgbench 15's semantics (pgbench.c's evalStandardFunc
//! and evalLazyFunc): integers are 64-bit and overflow is an error, a double operand makes
//! arithmetic double (but `%` is always integer), NULL in makes NULL out (but for IS and
//! debug), AND/OR/CASE evaluate lazily, doubles become integers by rounding half to even and
//! only when they fit, and the random and hash functions are pgbench's algorithms.

use super::expr::{Expr, Func};
use super::prng::PgPrng;

pub use super::expr::Value;

/// A variable's value: computed by `\set`, or text as `\gset` and `\aset` store what the server
/// returned (read as a number or boolean when an expression uses it, as pgbench does).
#[derive(Debug, Clone, PartialEq)]
pub enum Var {
    Value(Value),
    Text(String),
}

pub const MIN_GAUSSIAN: f64 = 2.0;
pub const MIN_ZIPFIAN: f64 = 1.001;
pub const MAX_ZIPFIAN: f64 = 1000.0;

/// What evaluation needs of the client running it.
pub struct Env<'a> {
    pub vars: &'a [Option<Var>],
    /// Names of the slots, for errors.
    pub names: &'a super::expr::Symbols,
    pub rng: &'a mut PgPrng,
    /// debug()'s prefix: the script's and the command's numbers.
    pub at: (usize, usize),
}

impl Value {
    fn type_name(self) -> &'static str {
        match self {
            Value::Null => "null", // a value's name, not an engine
            Value::Bool(_) => "boolean",
            Value::Int(_) => "int",
            Value::Double(_) => "double",
        }
    }

    /// pgbench's valueTruth: non-zero numbers are true, NULL false.
    pub fn truth(self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Double(d) => d != 0.0,
        }
    }

    pub fn int(self) -> Result<i64, String> {
        match self {
            Value::Int(i) => Ok(i),
            Value::Double(d) => {
                let r = d.round_ties_even();
                // FLOAT8_FITS_IN_INT64
                if r.is_nan() || !(r >= i64::MIN as f64 && r < -(i64::MIN as f64)) {
                    return Err(format!("double to int overflow for {r:.6}"));
                }
                Ok(r as i64)
            }
            v => Err(format!("cannot coerce {} to int", v.type_name())),
        }
    }

    pub fn double(self) -> Result<f64, String> {
        match self {
            Value::Double(d) => Ok(d),
            Value::Int(i) => Ok(i as f64),
            v => Err(format!("cannot coerce {} to double", v.type_name())),
        }
    }

    fn boolean(self) -> Result<bool, String> {
        match self {
            Value::Bool(b) => Ok(b),
            v => Err(format!("cannot coerce {} to boolean", v.type_name())),
        }
    }

    /// The text a variable stands for in SQL (pgbench's getVariable).
    pub fn text(self) -> String {
        match self {
            Value::Null => "NULL".into(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Double(d) => format_g15(d),
        }
    }
}

impl Var {
    pub fn value(&self) -> Result<Value, String> {
        match self {
            Var::Value(v) => Ok(*v),
            Var::Text(s) => parse_text(s),
        }
    }

    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Var::Value(v) => v.text().into(),
            Var::Text(s) => s.as_str().into(),
        }
    }
}

/// A stored text as a value (pgbench's makeVariableValue): null, a prefix of true/yes/false/no,
/// on/off, an integer, a double; anything else is malformed.
fn parse_text(s: &str) -> Result<Value, String> {
    let l = s.to_ascii_lowercase();
    let prefix_of = |w: &str, least: usize| l.len() >= least && w.starts_with(l.as_str());
    let is_null = l == "null"; // a value's name, not an engine
    if is_null {
        return Ok(Value::Null);
    }
    if prefix_of("true", 1) || prefix_of("yes", 1) || prefix_of("on", 2) {
        return Ok(Value::Bool(true));
    }
    if prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) {
        return Ok(Value::Bool(false));
    }
    let t = s.trim();
    if let Ok(i) = t.parse::<i64>() {
        return Ok(Value::Int(i));
    }
    match t.parse::<f64>() {
        Ok(d) if !t.is_empty() => Ok(Value::Double(d)),
        _ => Err(format!(
            "malformed variable value: {}",
            crate::untrusted::shown(s)
        )),
    }
}

/// C's `%.15g` (DBL_DIG digits), as pgbench writes a double into SQL.
pub fn format_g15(d: f64) -> String {
    const P: i32 = 15;
    if d.is_nan() {
        return "nan".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "inf" } else { "-inf" }.into();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = format!("{:.*e}", (P - 1) as usize, d);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let x: i32 = exp.parse().unwrap_or(0);
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..P).contains(&x) {
        let sign = if x < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mant), x.abs())
    } else {
        strip(&format!("{:.*}", (P - 1 - x) as usize, d))
    }
}

/// FNV-1a over the value's 8 bytes, low first (getHashFnv1a).
pub fn hash_fnv1a(val: i64, seed: i64) -> i64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut result = OFFSET_BASIS ^ seed as u64;
    let mut v = val;
    for _ in 0..8 {
        result ^= (v & 0xff) as u64;
        result = result.wrapping_mul(PRIME);
        v >>= 8;
    }
    result as i64
}

/// Murmur2's 64-bit mix of one value (getHashMurmur2).
pub fn hash_murmur2(val: i64, seed: i64) -> i64 {
    const MUL: u64 = 0xc6a4_a793_5bd1_e995;
    const ROT: u32 = 47;
    let mut result = seed as u64 ^ MUL.wrapping_mul(8);
    let mut k = val as u64;
    k = k.wrapping_mul(MUL);
    k ^= k >> ROT;
    k = k.wrapping_mul(MUL);
    result ^= k;
    result = result.wrapping_mul(MUL);
    result ^= result >> ROT;
    result = result.wrapping_mul(MUL);
    result ^= result >> ROT;
    result as i64
}

/// pgbench's permute(): six rounds of bijections on overlapping halves and a random offset,
/// from a pg_prng seeded with `seed`.
pub fn permute(val: i64, isize: i64, seed: i64) -> i64 {
    if isize < 2 {
        return 0;
    }
    let mut state = PgPrng::seed(seed as u64);
    let size = isize as u64;
    let mut v = (val as u64) % size;
    let masklen = 63 - size.leading_zeros();
    let mask = (1u64 << masklen) - 1;
    let rot = |x: u64| ((x << 1) & mask) | (x >> (masklen - 1));
    for _ in 0..6 {
        let m = (state.next_u64() & mask) | 1;
        let r = state.next_u64() & mask;
        if v <= mask {
            v = (v.wrapping_mul(m) ^ r) & mask;
            v = rot(v);
        }
        let m = (state.next_u64() & mask) | 1;
        let r = state.next_u64() & mask;
        let mut t = size - 1 - v;
        if t <= mask {
            t = (t.wrapping_mul(m) ^ r) & mask;
            t = rot(t);
            v = size - 1 - t;
        }
        let r = state.range(0, size - 1);
        v = (v + r) % size;
    }
    v as i64
}

/// Uniform in [min, max] (getrand).
pub fn uniform(rng: &mut PgPrng, min: i64, max: i64) -> i64 {
    min.wrapping_add(rng.range(0, max.wrapping_sub(min) as u64) as i64)
}

fn exponential(rng: &mut PgPrng, min: i64, max: i64, parameter: f64) -> i64 {
    let cut = (-parameter).exp();
    let u = 1.0 - rng.double();
    let rand = -(cut + (1.0 - cut) * u).ln() / parameter;
    min + ((max - min + 1) as f64 * rand) as i64
}

fn gaussian(rng: &mut PgPrng, min: i64, max: i64, parameter: f64) -> i64 {
    let stdev = loop {
        let s = rng.normal();
        if s >= -parameter && s < parameter {
            break s;
        }
    };
    let rand = (stdev + parameter) / (parameter * 2.0);
    min + ((max - min + 1) as f64 * rand) as i64
}

/// Devroye's rejection method for s > 1 (computeIterativeZipfian).
fn zipfian(rng: &mut PgPrng, min: i64, max: i64, s: f64) -> i64 {
    let n = max - min + 1;
    if n <= 1 {
        return min;
    }
    let b = 2f64.powf(s - 1.0);
    let x = loop {
        let u = rng.double();
        let v = rng.double();
        let x = u.powf(-1.0 / (s - 1.0)).floor();
        let t = (1.0 + 1.0 / x).powf(s - 1.0);
        if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n as f64 {
            break x;
        }
    };
    min - 1 + x as i64
}

impl Env<'_> {
    pub fn eval(&mut self, e: &Expr) -> Result<Value, String> {
        match e {
            Expr::Const(v) => Ok(*v),
            Expr::Var(slot) => match self.vars.get(*slot).and_then(|v| v.as_ref()) {
                Some(v) => v.value(),
                None => Err(format!("undefined variable \"{}\"", self.names.name(*slot))),
            },
            Expr::Call(f, args) => match f {
                Func::And | Func::Or | Func::Case => self.lazy(*f, args),
                _ => {
                    let mut vals = Vec::with_capacity(args.len());
                    for a in args {
                        vals.push(self.eval(a)?);
                    }
                    self.standard(*f, &vals)
                }
            },
        }
    }

    fn lazy(&mut self, f: Func, args: &[Expr]) -> Result<Value, String> {
        if f == Func::Case {
            let mut i = 0;
            while i + 1 < args.len() {
                if self.eval(&args[i])?.truth() {
                    return self.eval(&args[i + 1]);
                }
                i += 2;
            }
            return self.eval(&args[args.len() - 1]);
        }
        let a = self.eval(&args[0])?;
        if a == Value::Null {
            return Ok(Value::Null);
        }
        let a = a.boolean()?;
        if (f == Func::And && !a) || (f == Func::Or && a) {
            return Ok(Value::Bool(a));
        }
        match self.eval(&args[1])? {
            Value::Null => Ok(Value::Null),
            b => Ok(Value::Bool(b.boolean()?)),
        }
    }

    fn standard(&mut self, f: Func, v: &[Value]) -> Result<Value, String> {
        if f != Func::Is && f != Func::Debug && v.contains(&Value::Null) {
            return Ok(Value::Null);
        }
        use Func::*;
        Ok(match f {
            Add | Sub | Mul | Div | Mod | Eq | Ne | Le | Lt => arithmetic(f, v[0], v[1])?,
            BitAnd | BitOr | BitXor | Lshift | Rshift => {
                let (l, r) = (v[0].int()?, v[1].int()?);
                Value::Int(match f {
                    BitAnd => l & r,
                    BitOr => l | r,
                    BitXor => l ^ r,
                    // x86's shift, which is what pgbench's C does for any count.
                    Lshift => l.wrapping_shl(r as u32),
                    _ => l.wrapping_shr(r as u32),
                })
            }
            Not => Value::Bool(!v[0].boolean()?),
            Pi => Value::Double(std::f64::consts::PI),
            Abs => match v[0] {
                Value::Int(i) => Value::Int(i.wrapping_abs()),
                x => Value::Double(x.double()?.abs()),
            },
            Debug => {
                let shown = match v[0] {
                    Value::Null => "null".to_string(), // a value's name, not an engine
                    Value::Bool(b) => format!("boolean {b}"),
                    Value::Int(i) => format!("int {i}"),
                    Value::Double(d) => format!("double {}", format_g15(d)),
                };
                eprintln!("debug(script={},command={}): {shown}", self.at.0, self.at.1);
                v[0]
            }
            Double => Value::Double(v[0].double()?),
            Sqrt => Value::Double(v[0].double()?.sqrt()),
            Ln => Value::Double(v[0].double()?.ln()),
            Exp => Value::Double(v[0].double()?.exp()),
            Int => Value::Int(v[0].int()?),
            Least | Greatest => extremum(f == Least, v)?,
            Random | RandomGaussian | RandomExponential | RandomZipfian => self.random(f, v)?,
            Pow => Value::Double(v[0].double()?.powf(v[1].double()?)),
            Is => Value::Bool(match (v[0], v[1]) {
                (Value::Null, Value::Null) => true,
                (Value::Bool(a), Value::Bool(b)) => a == b,
                _ => false,
            }),
            HashMurmur2 => Value::Int(hash_murmur2(v[0].int()?, v[1].int()?)),
            HashFnv1a => Value::Int(hash_fnv1a(v[0].int()?, v[1].int()?)),
            Permute => {
                let (val, size, seed) = (v[0].int()?, v[1].int()?, v[2].int()?);
                if size <= 0 {
                    return Err("permute size parameter must be greater than zero".into());
                }
                Value::Int(permute(val, size, seed))
            }
            And | Or | Case => unreachable!("evaluated lazily"),
        })
    }

    fn random(&mut self, f: Func, v: &[Value]) -> Result<Value, String> {
        let (min, max) = (v[0].int()?, v[1].int()?);
        if min > max {
            return Err("empty range given to random".into());
        }
        if max
            .checked_sub(min)
            .and_then(|d| d.checked_add(1))
            .is_none()
        {
            return Err("random range is too large".into());
        }
        let r = &mut *self.rng;
        Ok(Value::Int(match f {
            Func::Random => uniform(r, min, max),
            Func::RandomGaussian => {
                let p = v[2].double()?;
                if p < MIN_GAUSSIAN {
                    return Err(format!(
                        "gaussian parameter must be at least {MIN_GAUSSIAN:.6} (not {p:.6})"
                    ));
                }
                gaussian(r, min, max, p)
            }
            Func::RandomZipfian => {
                let p = v[2].double()?;
                if !(MIN_ZIPFIAN..=MAX_ZIPFIAN).contains(&p) {
                    return Err(format!(
                        "zipfian parameter must be in range [{MIN_ZIPFIAN:.3}, {MAX_ZIPFIAN:.0}] \
                         (not {p:.6})"
                    ));
                }
                zipfian(r, min, max, p)
            }
            _ => {
                let p = v[2].double()?;
                if p <= 0.0 {
                    return Err(format!(
                        "exponential parameter must be greater than zero (not {p:.6})"
                    ));
                }
                exponential(r, min, max, p)
            }
        }))
    }
}

fn arithmetic(f: Func, l: Value, r: Value) -> Result<Value, String> {
    use Func::*;
    let double = matches!(l, Value::Double(_)) || matches!(r, Value::Double(_));
    if double && f != Mod {
        let (a, b) = (l.double()?, r.double()?);
        return Ok(match f {
            Add => Value::Double(a + b),
            Sub => Value::Double(a - b),
            Mul => Value::Double(a * b),
            Div => Value::Double(a / b),
            Eq => Value::Bool(a == b),
            Ne => Value::Bool(a != b),
            Le => Value::Bool(a <= b),
            _ => Value::Bool(a < b),
        });
    }
    let (a, b) = (l.int()?, r.int()?);
    let out = |x: Option<i64>, what: &str| {
        x.map(Value::Int)
            .ok_or(format!("bigint {what} out of range"))
    };
    match f {
        Add => out(a.checked_add(b), "add"),
        Sub => out(a.checked_sub(b), "sub"),
        Mul => out(a.checked_mul(b), "mul"),
        Eq => Ok(Value::Bool(a == b)),
        Ne => Ok(Value::Bool(a != b)),
        Le => Ok(Value::Bool(a <= b)),
        Lt => Ok(Value::Bool(a < b)),
        _ if b == 0 => Err("division by zero".into()),
        Div if b == -1 => out(a.checked_neg(), "div"),
        Mod if b == -1 => Ok(Value::Int(0)),
        Div => Ok(Value::Int(a / b)),
        _ => Ok(Value::Int(a % b)),
    }
}

fn extremum(least: bool, v: &[Value]) -> Result<Value, String> {
    if v.iter().any(|x| matches!(x, Value::Double(_))) {
        let mut e = v[0].double()?;
        for x in &v[1..] {
            let d = x.double()?;
            e = if least { e.min(d) } else { e.max(d) };
        }
        return Ok(Value::Double(e));
    }
    let mut e = v[0].int()?;
    for x in &v[1..] {
        let i = x.int()?;
        e = if least { e.min(i) } else { e.max(i) };
    }
    Ok(Value::Int(e))
}

#[cfg(test)]
#[path = "eval_tests.rs"]
mod tests;
