use super::*;

fn parse_ok(text: &str) -> (Script, Symbols) {
    let mut s = Symbols::default();
    let sc = parse("t.sql", 1, text, &mut s).unwrap();
    (sc, s)
}

fn parse_err(text: &str) -> String {
    parse("t.sql", 1, text, &mut Symbols::default()).unwrap_err()
}

#[test]
fn the_builtin_tpcb_like_is_four_sets_and_seven_sql_commands() {
    let text = crate::workload::pgbench::builtin::Builtin::TpcbLike.text();
    let (sc, sym) = parse_ok(text);
    let sets = sc
        .commands
        .iter()
        .filter(|c| matches!(c.kind, Kind::Set { .. }))
        .count();
    let sql: Vec<&Command> = sc
        .commands
        .iter()
        .filter(|c| matches!(c.kind, Kind::Sql { .. }))
        .collect();
    assert_eq!((sets, sql.len()), (4, 7));
    assert_eq!(sql[0].text, "BEGIN;");
    assert_eq!(sql[6].text, "END;");
    assert_eq!(sql[1].line, 6);
    let Kind::Sql { parts, .. } = &sql[1].kind else {
        unreachable!()
    };
    assert_eq!(
        parts,
        &[
            Part::Text("UPDATE pgbench_accounts SET abalance = abalance + ".into()),
            Part::Var {
                slot: sym.find("delta").unwrap(),
                name: "delta".into()
            },
            Part::Text(" WHERE aid = ".into()),
            Part::Var {
                slot: sym.find("aid").unwrap(),
                name: "aid".into()
            },
            Part::Text(";".into()),
        ]
    );
}

#[test]
fn sql_ends_at_semicolons_outside_quotes_and_comments() {
    let (sc, _) = parse_ok(
        "-- a comment\nSELECT 'a;b', \"c;d\" /* e; */\n  FROM t; SELECT 2;\nSELECT 1 \\; SELECT 3;\n",
    );
    let texts: Vec<String> = sc
        .commands
        .iter()
        .map(|c| match &c.kind {
            Kind::Sql { parts, .. } => parts
                .iter()
                .map(|p| match p {
                    Part::Text(t) => t.clone(),
                    Part::Var { name, .. } => format!(":{name}"),
                })
                .collect(),
            _ => String::new(),
        })
        .collect();
    assert_eq!(
        texts,
        [
            "SELECT 'a;b', \"c;d\" /* e; */\n  FROM t;",
            "SELECT 2;",
            "SELECT 1 ; SELECT 3;"
        ]
    );
    assert_eq!(sc.commands[0].line, 2);
    // A cast is not a variable.
    let (sc, sym) = parse_ok("SELECT '1'::int, :x;");
    assert!(sym.find("int").is_none() && sym.find("x").is_some());
    assert_eq!(sc.commands.len(), 1);
}

#[test]
fn conditionals_are_linked_into_their_chains() {
    let (sc, _) = parse_ok(
        "\\if :a = 1\nSELECT 1;\n\\elif :a = 2\nSELECT 2;\n\\else\nSELECT 3;\n\\endif\nSELECT 4;\n",
    );
    let k: Vec<&Kind> = sc.commands.iter().map(|c| &c.kind).collect();
    assert!(matches!(k[0], Kind::If { next: 2, .. }));
    assert!(matches!(
        k[2],
        Kind::Elif {
            next: 4,
            end: 6,
            ..
        }
    ));
    assert!(matches!(k[4], Kind::Else { end: 6 }));
    assert!(matches!(k[6], Kind::Endif));
}

#[test]
fn gset_names_the_select_lists_columns_with_its_prefix() {
    let (sc, sym) = parse_ok("SELECT abalance, 1 AS one FROM pgbench_accounts \\gset p_\n");
    let Kind::Sql { gset: Some(g), .. } = &sc.commands[0].kind else {
        panic!("{:?}", sc.commands)
    };
    assert_eq!(
        g.columns,
        [sym.find("p_abalance").unwrap(), sym.find("p_one").unwrap()]
    );
    assert!(!g.all);
    let (sc, _) = parse_ok("SELECT 1 AS x;\n\\aset\n");
    assert!(matches!(&sc.commands[0].kind, Kind::Sql { gset: Some(g), .. } if g.all));
}

#[test]
fn sleep_takes_its_units_and_set_continues_after_a_backslash() {
    let (sc, sym) = parse_ok("\\sleep 2 ms\n\\sleep :d us\n\\set x 1 + \\\n 2\n");
    assert_eq!(sc.commands[0].kind, Kind::Sleep(Sleep::Micros(2_000)));
    assert_eq!(
        sc.commands[1].kind,
        Kind::Sleep(Sleep::Var {
            slot: sym.find("d").unwrap(),
            per_unit: 1
        })
    );
    assert!(matches!(sc.commands[2].kind, Kind::Set { .. }));
    assert_eq!(sc.commands.len(), 3);
}

#[test]
fn what_dbperf_cannot_run_is_refused_naming_the_line() {
    for (text, says) in [
        (
            "SELECT 1;\n\\shell rm -rf /\n",
            "t.sql:2: \\shell is refused",
        ),
        ("\\setshell x echo 1\n", "t.sql:1: \\setshell is refused"),
        ("\\startpipeline\n", "t.sql:1: \\startpipeline"),
        ("\\set x\n", "t.sql:1: \\set needs"),
        ("\\set 1x 2\n", "invalid variable name"),
        ("\\set x random(1)\n", "t.sql:1: random takes 2"),
        (
            "\\if 1\nSELECT 1;\n",
            "t.sql:1: \\if without a matching \\endif",
        ),
        ("\\endif\n", "t.sql:1: \\endif without"),
        ("\\else\n", "without a matching \\if"),
        (
            "\\if 1\n\\else\n\\elif 2\n\\endif\n",
            "t.sql:3: \\elif or \\else after \\else",
        ),
        ("\\gset\n", "must follow an SQL command"),
        ("SELECT 1 + 1 \\gset\n", "AS name"),
        ("\\sleep 1 h\n", "us, ms or s"),
        ("\\frobnicate\n", "t.sql:1: invalid command"),
        ("-- nothing\n", "no commands"),
    ] {
        let e = parse_err(text);
        assert!(e.contains(says), "{text:?}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
