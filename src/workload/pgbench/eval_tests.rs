use super::*;
use crate::workload::pgbench::expr::{parse, Symbols};

fn eval_with(src: &str, vars: &[(&str, Var)]) -> Result<Value, String> {
    let mut sym = Symbols::default();
    let e = parse(src, &mut sym).unwrap();
    let mut slots = vec![None; sym.len()];
    for (n, v) in vars {
        if let Some(s) = sym.find(n) {
            slots[s] = Some(v.clone());
        }
    }
    let mut rng = PgPrng::seed(1);
    Env {
        vars: &slots,
        names: &sym,
        rng: &mut rng,
        at: (0, 1),
    }
    .eval(&e)
}

fn eval(src: &str) -> Result<Value, String> {
    eval_with(src, &[])
}

#[test]
fn arithmetic_is_pgbenchs() {
    use Value::*;
    assert_eq!(eval("7 / 2"), Ok(Int(3)));
    assert_eq!(eval("-7 / 2"), Ok(Int(-3)));
    assert_eq!(eval("-7 % 3"), Ok(Int(-1)));
    assert_eq!(eval("7.0 / 2"), Ok(Double(3.5)));
    // % is integer even on doubles, which round half to even first.
    assert_eq!(eval("7.5 % 2"), Ok(Int(0)));
    assert_eq!(eval("int(2.5) + int(3.5) + int(-2.5)"), Ok(Int(4)));
    assert_eq!(eval("5 % -1"), Ok(Int(0)));
    assert_eq!(eval("1 << 3 | 1"), Ok(Int(9)));
    assert_eq!(eval("~0"), Ok(Int(-1)));
    assert_eq!(eval("abs(-3) + greatest(1, 2.5)"), Ok(Double(5.5)));
    assert_eq!(eval("least(3, 1, 2)"), Ok(Int(1)));
    assert_eq!(eval("pow(2, 10)"), Ok(Double(1024.0)));
    assert_eq!(
        eval("9223372036854775807 + 1"),
        Err("bigint add out of range".into())
    );
    assert_eq!(
        eval("(-9223372036854775808) / -1"),
        Err("bigint div out of range".into())
    );
    assert_eq!(eval("1 / 0"), Err("division by zero".into()));
    assert!(eval("int(1e30)")
        .unwrap_err()
        .contains("double to int overflow"));
}

#[test]
fn logic_and_null_are_pgbenchs() {
    use Value::*;
    assert_eq!(eval("1 < 2 AND 3 >= 3"), Ok(Bool(true)));
    assert_eq!(eval("NULL AND false"), Ok(Null));
    assert_eq!(eval("false AND NULL"), Ok(Bool(false)));
    assert_eq!(eval("true OR 1 / 0 = 1"), Ok(Bool(true)), "OR is lazy");
    assert_eq!(eval("NULL + 1"), Ok(Null));
    assert_eq!(eval("NULL IS NULL"), Ok(Bool(true)));
    assert_eq!(eval("1 IS NOT NULL"), Ok(Bool(true)));
    assert_eq!(eval("2 NOTNULL"), Ok(Bool(true)));
    assert_eq!(
        eval("CASE WHEN 1 = 2 THEN 10 WHEN 2 = 2 THEN 20 ELSE 30 END"),
        Ok(Int(20))
    );
    assert_eq!(eval("CASE WHEN false THEN 1 END"), Ok(Null));
    assert_eq!(eval("NOT 1"), Err("cannot coerce int to boolean".into()));
    assert_eq!(eval(":nope + 1"), Err("undefined variable \"nope\"".into()));
}

#[test]
fn stored_text_reads_as_pgbench_reads_it() {
    let t = |s: &str| Var::Text(s.into());
    assert_eq!(eval_with(":x + 1", &[("x", t("41"))]), Ok(Value::Int(42)));
    assert_eq!(
        eval_with(":x * 2", &[("x", t("1.25"))]),
        Ok(Value::Double(2.5))
    );
    assert_eq!(
        eval_with("NOT :x", &[("x", t("off"))]),
        Ok(Value::Bool(true))
    );
    assert_eq!(eval_with(":x", &[("x", t("t"))]), Ok(Value::Bool(true)));
    assert!(eval_with(":x", &[("x", t("abc"))])
        .unwrap_err()
        .contains("malformed variable value"));
}

#[test]
fn doubles_are_written_as_c_writes_percent_15g() {
    assert_eq!(format_g15(0.1), "0.1");
    assert_eq!(format_g15(1.0 / 3.0), "0.333333333333333");
    assert_eq!(format_g15(1e20), "1e+20");
    assert_eq!(format_g15(123456789012345.0), "123456789012345");
    assert_eq!(format_g15(1234567890123456.0), "1.23456789012346e+15");
    assert_eq!(format_g15(0.0001), "0.0001");
    assert_eq!(format_g15(0.00001), "1e-05");
    assert_eq!(format_g15(-2.5), "-2.5");
    assert_eq!(Value::Int(-3).text(), "-3");
}

#[test]
fn random_functions_stay_in_range_and_check_their_parameters() {
    for src in [
        "random(1, 10)",
        "random_exponential(1, 10, 2.5)",
        "random_gaussian(1, 10, 2.5)",
        "random_zipfian(1, 10, 1.5)",
    ] {
        for _ in 0..50 {
            let v = eval(src).unwrap().int().unwrap();
            assert!((1..=10).contains(&v), "{src}: {v}");
        }
    }
    assert_eq!(
        eval("random(5, 1)"),
        Err("empty range given to random".into())
    );
    assert!(eval("random(-9223372036854775808, 9223372036854775807)")
        .unwrap_err()
        .contains("too large"));
    assert!(eval("random_gaussian(1, 10, 1.5)")
        .unwrap_err()
        .contains("at least 2.0"));
    assert!(eval("random_zipfian(1, 10, 1.0)")
        .unwrap_err()
        .contains("zipfian parameter"));
    assert!(eval("random_exponential(1, 10, 0)")
        .unwrap_err()
        .contains("greater than zero"));
    assert!(eval("permute(1, 0, 5)")
        .unwrap_err()
        .contains("greater than zero"));
}

#[test]
fn permute_is_a_permutation() {
    for size in [1i64, 2, 3, 7, 100, 1000] {
        let mut seen: Vec<i64> = (0..size).map(|v| permute(v, size, 12345)).collect();
        seen.sort();
        assert_eq!(seen, (0..size).collect::<Vec<_>>(), "size {size}");
    }
}

/// Values pgbench 15 itself computed: `pgbench -n -t 1 -D default_seed=7 -f` a script of
/// `\set`s whose SELECT the server logged (log_statement = all).
#[test]
fn hashes_and_permute_give_pgbenchs_own_values() {
    let seed = [("default_seed", Var::Value(Value::Int(7)))];
    for (src, want) in [
        ("hash(12345)", 4937366046783373201i64),
        ("hash_fnv1a(12345, 5432)", -3356549155111684876),
        ("hash_murmur2(-7, 0)", -2376560325806870531),
        ("permute(0, 100, 5432)", 68),
        ("permute(1, 100, 5432)", 50),
        ("permute(99, 100, 5432)", 26),
        ("permute(12345, 1000000, 42)", 100143),
        ("hash_fnv1a(0, 0)", -6284781860667377211),
        ("permute(3, 7, -1)", 2),
        ("hash(1, 2)", -3827666828038376880),
    ] {
        assert_eq!(eval_with(src, &seed), Ok(Value::Int(want)), "{src}");
    }
    // And the doubles as pgbench wrote them into that SELECT.
    assert_eq!(eval("1.0 / 3").unwrap().text(), "0.333333333333333");
    assert_eq!(eval("1e20 + 0").unwrap().text(), "1e+20");
}
