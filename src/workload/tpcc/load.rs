//! The load (sysbench-tpcc's prepare, clause 4.3.3's initial population): the items once, then
//! every warehouse with its districts, customers, history, orders, new orders, order lines and
//! stock, in multi-row INSERTs sent as SQL text (autocommit). Loading connections take the
//! warehouses in turn (connection k of n loads warehouses k+1, k+1+n, ...; the first loads the
//! items before its warehouses). Each warehouse's rows come from its own seeded streams, so the
//! data does not depend on how many connections load it.

use std::fmt::Write;
use std::sync::Arc;

use super::data::{alnum, last_name, push_alnum, uniform, zip, NuConstants};
use super::schema::{forms, push_literal, Forms};
use super::{CUSTOMERS, DISTRICTS, FIRST_NEW_ORDER, INSERT, ITEMS, ORDERS};
use crate::dbms::rows::hundredths_text;
use crate::dbms::{Conn, Dbms};
use crate::runner::{ErrorClass, OpError, OpOutcome, Role};
use crate::workload::common::rand::{rng, stream_seed, Rand};

/// Rows per INSERT: about 300 KB of customer rows, well under every server's packet limit.
const BATCH: u64 = 500;

/// What a loading connection inserts next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Table {
    Item,
    Warehouse,
    District,
    Customer,
    History,
    Orders,
    NewOrders,
    OrderLine,
    Stock,
    Done,
}

pub struct Loader {
    conn: Box<dyn Conn>,
    forms: Forms,
    seed: u64,
    /// This connection's warehouses, in order.
    warehouses: Vec<u64>,
    /// Index into `warehouses`.
    at: usize,
    table: Table,
    /// Rows of `table` inserted so far for the current warehouse (or of the items).
    done: u64,
    rng: Rand,
    /// The load's constants of NURand (C_LOAD, clause 2.1.6.1), the same on every connection.
    nu: NuConstants,
    /// Per order of the current warehouse (district-major): its line count and customer.
    ol_cnt: Vec<u8>,
    customer_of: Vec<u16>,
    sql: String,
    name: String,
}

impl Loader {
    /// Connection `k` of `n` for `warehouses` warehouses.
    pub fn new(
        dbms: Arc<dyn Dbms>,
        warehouses: u64,
        k: u64,
        n: u64,
        seed: u64,
    ) -> anyhow::Result<Loader> {
        let mut conn = dbms.connect()?;
        // Loads may take long (docs/reliability.md): bounded by --ddl-timeout.
        conn.set_budget(crate::dbms::Budget::Long);
        let first = if k == 0 {
            Table::Item
        } else {
            Table::Warehouse
        };
        let mut l = Loader {
            conn,
            forms: forms(dbms.dialect().sql()),
            seed,
            warehouses: (1..=warehouses).filter(|w| (w - 1) % n == k).collect(),
            at: 0,
            table: first,
            done: 0,
            rng: rng(0),
            nu: NuConstants::draw(&mut rng(stream_seed(seed, 1, 0, 0))),
            ol_cnt: Vec::new(),
            customer_of: Vec::new(),
            sql: String::with_capacity(1 << 20),
            name: String::new(),
        };
        l.enter(first);
        Ok(l)
    }

    fn warehouse(&self) -> u64 {
        self.warehouses.get(self.at).copied().unwrap_or(0)
    }

    /// Starts `t`: its rows' stream depends only on the seed, the warehouse and the table.
    fn enter(&mut self, t: Table) {
        self.table = t;
        self.done = 0;
        self.rng = rng(stream_seed(self.seed, 1, self.warehouse(), t as u64 + 1));
        if t == Table::Orders {
            self.plan_orders();
        }
    }

    /// Each district's orders: a line count uniform in [5, 15] and the customers in a random
    /// permutation (clause 4.3.3.1).
    fn plan_orders(&mut self) {
        self.ol_cnt.clear();
        self.customer_of.clear();
        for _ in 0..DISTRICTS {
            let mut perm: Vec<u16> = (1..=CUSTOMERS as u16).collect();
            for i in (1..perm.len()).rev() {
                let j = uniform(&mut self.rng, 0, i as u64) as usize;
                perm.swap(i, j);
            }
            self.customer_of.extend(perm);
            for _ in 0..ORDERS {
                self.ol_cnt.push(uniform(&mut self.rng, 5, 15) as u8);
            }
        }
    }

    /// Rows `table` has for one warehouse (order lines: counted by order, see `fill`).
    fn rows_of(&self, t: Table) -> u64 {
        match t {
            Table::Item => ITEMS,
            Table::Warehouse => 1,
            Table::District => DISTRICTS,
            Table::Customer | Table::History => DISTRICTS * CUSTOMERS,
            Table::Orders | Table::OrderLine => DISTRICTS * ORDERS,
            Table::NewOrders => DISTRICTS * (ORDERS - FIRST_NEW_ORDER + 1),
            Table::Stock => ITEMS,
            Table::Done => 0,
        }
    }

    fn next_table(&mut self) {
        let next = match self.table {
            Table::Item => Table::Warehouse,
            Table::Warehouse => Table::District,
            Table::District => Table::Customer,
            Table::Customer => Table::History,
            Table::History => Table::Orders,
            Table::Orders => Table::NewOrders,
            Table::NewOrders => Table::OrderLine,
            Table::OrderLine => Table::Stock,
            Table::Stock => {
                self.at += 1;
                Table::Warehouse
            }
            Table::Done => Table::Done,
        };
        let next = if self.at >= self.warehouses.len() {
            Table::Done
        } else {
            next
        };
        self.enter(next);
    }

    /// The next INSERT into `sql`; the rows it inserts.
    fn fill(&mut self) -> u64 {
        self.sql.clear();
        let (cols, table) = match self.table {
            Table::Item => ("i_id, i_im_id, i_name, i_price, i_data", "item"),
            Table::Warehouse => (
                "w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd",
                "warehouse",
            ),
            Table::District => (
                "d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, \
                 d_ytd, d_next_o_id",
                "district",
            ),
            Table::Customer => (
                "c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, \
                 c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, \
                 c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data",
                "customer",
            ),
            Table::History => (
                "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data",
                "history",
            ),
            Table::Orders => (
                "o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local",
                "orders",
            ),
            Table::NewOrders => ("no_o_id, no_d_id, no_w_id", "new_orders"),
            Table::OrderLine => (
                "ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, \
                 ol_quantity, ol_amount, ol_dist_info",
                "order_line",
            ),
            Table::Stock => (
                "s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, \
                 s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, \
                 s_order_cnt, s_remote_cnt, s_data",
                "stock",
            ),
            Table::Done => return 0,
        };
        let _ = write!(self.sql, "INSERT INTO {table} ({cols}) VALUES ");
        let total = self.rows_of(self.table);
        let mut rows = 0;
        while self.done < total && rows < BATCH {
            if rows > 0 {
                self.sql.push(',');
            }
            // Order lines are written an order at a time: `rows` counts lines.
            rows += self.row(self.done);
            self.done += 1;
        }
        rows
    }

    /// Row `i` of the current table (0-based) appended to `sql`; how many rows it wrote.
    fn row(&mut self, i: u64) -> u64 {
        let w = self.warehouse();
        match self.table {
            Table::Item => self.item(i),
            Table::Warehouse => self.warehouse_row(w),
            Table::District => self.district(i, w),
            Table::Customer => self.customer(i, w),
            Table::History => self.history(i, w),
            Table::Orders => self.order(i, w),
            Table::NewOrders => {
                let per = ORDERS - FIRST_NEW_ORDER + 1;
                let (d, o) = (i / per + 1, i % per + FIRST_NEW_ORDER);
                let _ = write!(self.sql, "({o},{d},{w})");
            }
            Table::OrderLine => return self.order_lines(i, w),
            Table::Stock => self.stock(i, w),
            Table::Done => return 0,
        }
        1
    }

    /// Row `i` of item.
    fn item(&mut self, i: u64) {
        let f = self.forms;
        let r = &mut self.rng;
        let s = &mut self.sql;
        let text = |s: &mut String, v: &str| push_literal(s, v, &f);
        let id = i + 1;
        let price = uniform(r, 100, 10_000) as i64;
        let _ = write!(s, "({id},{},", uniform(r, 1, 10_000));
        text(s, &alnum(r, 14, 24));
        let _ = write!(s, ",{},", hundredths_text(price));
        text(s, &alnum(r, 26, 50));
        s.push(')');
    }

    /// The warehouse's row.
    fn warehouse_row(&mut self, w: u64) {
        let f = self.forms;
        let r = &mut self.rng;
        let s = &mut self.sql;
        let _ = write!(s, "({w},");
        address(s, r, &f, true);
        let _ = write!(
            s,
            ",{},300000.00)",
            hundredths_text(uniform(r, 0, 20) as i64)
        );
    }

    /// District `i + 1` of warehouse `w`.
    fn district(&mut self, i: u64, w: u64) {
        let f = self.forms;
        let r = &mut self.rng;
        let s = &mut self.sql;
        let _ = write!(s, "({},{w},", i + 1);
        address(s, r, &f, true);
        let _ = write!(
            s,
            ",{},30000.00,{})",
            hundredths_text(uniform(r, 0, 20) as i64),
            ORDERS + 1
        );
    }

    /// Customer row `i`: its district and id, a last name from the first 1,000 in order then NURand, 10% bad credit.
    fn customer(&mut self, i: u64, w: u64) {
        let f = self.forms;
        let now = f.now;
        let r = &mut self.rng;
        let s = &mut self.sql;
        let text = |s: &mut String, v: &str| push_literal(s, v, &f);
        let (d, c) = (i / CUSTOMERS + 1, i % CUSTOMERS + 1);
        let n = if c <= 1000 {
            c - 1
        } else {
            self.nu.nurand(r, 255, 0, 999)
        };
        last_name(n, &mut self.name);
        let _ = write!(s, "({c},{d},{w},");
        text(s, &alnum(r, 8, 16));
        s.push_str(",'OE',");
        text(s, &self.name);
        s.push(',');
        address(s, r, &f, false);
        s.push_str(",'");
        super::data::push_digits(r, 16, s);
        let credit = if uniform(r, 1, 100) > 10 { "GC" } else { "BC" };
        let _ = write!(
            s,
            "',{now},'{credit}',50000,{},-10.00,10.00,1,0,",
            hundredths_text(uniform(r, 0, 50) as i64)
        );
        text(s, &alnum(r, 300, 500));
        s.push(')');
    }

    /// History row `i`, one per customer.
    fn history(&mut self, i: u64, w: u64) {
        let f = self.forms;
        let now = f.now;
        let r = &mut self.rng;
        let s = &mut self.sql;
        let text = |s: &mut String, v: &str| push_literal(s, v, &f);
        let (d, c) = (i / CUSTOMERS + 1, i % CUSTOMERS + 1);
        let _ = write!(s, "({c},{d},{w},{d},{w},{now},10.00,");
        text(s, &alnum(r, 12, 24));
        s.push(')');
    }

    /// Order row `i`: the first 2,100 of a district delivered (a carrier), the rest new.
    fn order(&mut self, i: u64, w: u64) {
        let f = self.forms;
        let now = f.now;
        let r = &mut self.rng;
        let s = &mut self.sql;
        let (d, o) = (i / ORDERS + 1, i % ORDERS + 1);
        let carrier = if o < FIRST_NEW_ORDER {
            uniform(r, 1, 10).to_string()
        } else {
            "NULL".to_string()
        };
        let _ = write!(
            s,
            "({o},{d},{w},{},{now},{carrier},{},1)",
            self.customer_of[i as usize], self.ol_cnt[i as usize]
        );
    }

    /// The lines of order row `i`, as many as it was given; how many.
    fn order_lines(&mut self, i: u64, w: u64) -> u64 {
        let f = self.forms;
        let now = f.now;
        let r = &mut self.rng;
        let s = &mut self.sql;
        let (d, o) = (i / ORDERS + 1, i % ORDERS + 1);
        let lines = u64::from(self.ol_cnt[i as usize]);
        for n in 1..=lines {
            if n > 1 {
                s.push(',');
            }
            let delivered = o < FIRST_NEW_ORDER;
            let (when, amount) = if delivered {
                (now, 0)
            } else {
                ("NULL", uniform(r, 1, 999_999) as i64)
            };
            let _ = write!(
                s,
                "({o},{d},{w},{n},{},{w},{when},5,{},'",
                uniform(r, 1, ITEMS),
                hundredths_text(amount)
            );
            push_alnum(r, 24, s);
            s.push_str("')");
        }
        lines
    }

    /// Stock row `i`.
    fn stock(&mut self, i: u64, w: u64) {
        let f = self.forms;
        let r = &mut self.rng;
        let s = &mut self.sql;
        let text = |s: &mut String, v: &str| push_literal(s, v, &f);
        let _ = write!(s, "({},{w},{}", i + 1, uniform(r, 10, 100));
        for _ in 0..10 {
            s.push_str(",'");
            push_alnum(r, 24, s);
            s.push('\'');
        }
        s.push_str(",0,0,0,");
        text(s, &alnum(r, 26, 50));
        s.push(')');
    }
}

/// Name, two streets, city, state and zip, as the load writes them for warehouses and
/// districts (`named`) and customers (no name: theirs is first and last).
fn address(s: &mut String, r: &mut Rand, f: &Forms, named: bool) {
    if named {
        push_literal(s, &alnum(r, 6, 10), f);
        s.push(',');
    }
    for (lo, hi) in [(10, 20), (10, 20), (10, 20), (2, 2)] {
        push_literal(s, &alnum(r, lo, hi), f);
        s.push(',');
    }
    push_literal(s, &zip(r), f);
}

impl Role for Loader {
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        while self.table != Table::Done && self.done >= self.rows_of(self.table) {
            self.next_table();
        }
        if self.table == Table::Done {
            return Ok(OpOutcome::Finished);
        }
        let rows = self.fill();
        match self.conn.run_text(&self.sql) {
            Ok(_) => Ok(OpOutcome::Done { kind: INSERT, rows }),
            // A load has no conflicts to retry: any error fails it.
            Err(e) => Err(OpError {
                kind: INSERT,
                class: ErrorClass::Failed,
                cause: Some(e.as_cause()),
                message: e.message,
            }),
        }
    }
}

/// The rows the load inserts for `warehouses` (order lines estimated at their mean of 10 an
/// order), for the progress bar.
pub fn planned_rows(warehouses: u64) -> u64 {
    let per = 1
        + DISTRICTS
        + 2 * DISTRICTS * CUSTOMERS
        + DISTRICTS * ORDERS
        + DISTRICTS * (ORDERS - FIRST_NEW_ORDER + 1)
        + 10 * DISTRICTS * ORDERS
        + ITEMS;
    ITEMS + warehouses * per
}
