//! The five transactions, one connection each, back to back (closed loop, no keying or think
//! time). Every statement is SQL text with its values written in, as sysbench-tpcc's
//! tpcc_run.lua sends it through `con:query`, in its order; where dbperf differs from it, it
//! follows the specification and docs/tpcc.md says so (a remote warehouse for 1% of order lines
//! and 15% of payments; Order-Status reads the lines of the customer's last order).

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::data::{last_name, uniform, NuConstants};
use super::schema::{forms, push_literal, push_read_back, session, Forms};
use super::{Isolation, Mix, CUSTOMERS, DISTRICTS, ITEMS, NEW_ORDER, ROLLED_BACK, WARMUP};
use super::{DELIVERY, ORDER_STATUS, PAYMENT};
use crate::dbms::rows::hundredths_text;
use crate::dbms::{Conn, DbError, Dbms, Keep, Rows};
use crate::runner::{ErrorClass, OpError, OpOutcome, Role};
use crate::workload::common::rand::Rand;
use crate::workload::common::stop::Stop;

/// What a transaction's statement may return: a customer has a few dozen orders at most after
/// hours of a run, a last name a few customers per district.
const KEEP_TPCC: Keep = Keep {
    rows: 100_000,
    value: 4 << 10,
    total: 16 << 20,
};

/// Counts the connections share, read when the step ends.
#[derive(Debug, Default)]
pub struct Counts {
    /// Statements of the transactions that ended (committed or rolled back on purpose) in the
    /// measured time, per transaction type (`TRANSACTIONS` order, the rolled back New-Orders
    /// with the others).
    pub statements: [AtomicU64; 5],
    /// New-Orders committed during the warm-up: with the measured ones, what the database's
    /// order numbers must have grown by.
    pub warmup_new_orders: AtomicU64,
}

pub struct ClientSpec {
    pub warehouses: u64,
    pub mix: Mix,
    pub isolation: Isolation,
    pub stop: Stop,
    pub counts: Arc<Counts>,
}

/// How a transaction ended without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Committed,
    /// The 1% of New-Orders with an unused item, rolled back as the specification asks.
    RolledBack,
}

pub struct Client {
    conn: Box<dyn Conn>,
    f: Forms,
    rng: Rand,
    nu: NuConstants,
    spec: ClientSpec,
    sql: String,
    rows: Rows,
    name: String,
    /// Statements sent by the transaction under way.
    sent: u64,
    clock: Option<(Instant, Instant)>,
}

/// A line's amount in hundredths: quantity × price × (1 + taxes) × (1 − discount), rounded,
/// with the taxes and discount in hundredths. Computed wide and saturated, since the price,
/// taxes and discount are what the server returned.
fn line_amount(qty: i64, price: i64, taxes: i64, discount: i64) -> i64 {
    let wide = i128::from(qty)
        * i128::from(price)
        * (100 + i128::from(taxes))
        * (100 - i128::from(discount));
    let rounded = (wide + 5_000).div_euclid(10_000);
    rounded.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// A value the server returned that the transaction cannot use: the step fails with it.
fn bad_value(e: crate::dbms::rows::ValueError, sql: &str) -> DbError {
    DbError {
        message: format!("{e}, to: {}", crate::untrusted::shown(sql)),
        transient: false,
        code: None,
        fault: None,
        lost: None,
    }
}

impl Client {
    pub fn new(dbms: Arc<dyn Dbms>, spec: ClientSpec, mut rng: Rand) -> anyhow::Result<Client> {
        let mut conn = dbms.connect()?;
        let d = dbms.dialect().sql();
        for s in session(d, spec.isolation) {
            conn.run_text(&s)?;
        }
        Ok(Client {
            conn,
            f: forms(d),
            nu: NuConstants::draw(&mut rng),
            rng,
            spec,
            sql: String::with_capacity(4096),
            rows: Rows::default(),
            name: String::new(),
            sent: 0,
            clock: None,
        })
    }

    /// Sends `sql` (no rows kept).
    fn exec(&mut self) -> Result<u64, DbError> {
        self.sent += 1;
        self.conn.run_text(&self.sql)
    }

    /// Sends `sql` and keeps its rows in `rows`.
    fn fetch(&mut self) -> Result<usize, DbError> {
        self.sent += 1;
        self.conn.text_rows(&self.sql, KEEP_TPCC, &mut self.rows)?;
        Ok(self.rows.len())
    }

    fn int(&self, row: usize, col: usize) -> Result<i64, DbError> {
        self.rows.int(row, col).map_err(|e| bad_value(e, &self.sql))
    }

    fn cents(&self, row: usize, col: usize) -> Result<i64, DbError> {
        self.rows
            .hundredths(row, col)
            .map_err(|e| bad_value(e, &self.sql))
    }

    fn text_of(&self, row: usize, col: usize) -> Result<String, DbError> {
        self.rows
            .text(row, col)
            .map_err(|e| bad_value(e, &self.sql))
    }

    fn set(&mut self, sql: std::fmt::Arguments) {
        self.sql.clear();
        let _ = self.sql.write_fmt(sql);
    }

    fn begin(&mut self, writes: bool) -> Result<(), DbError> {
        let b = if writes { self.f.begin_write } else { "BEGIN" };
        self.set(format_args!("{b}"));
        self.exec().map(|_| ())
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.set(format_args!("COMMIT"));
        self.exec().map(|_| ())
    }

    fn warehouse(&mut self) -> u64 {
        uniform(&mut self.rng, 1, self.spec.warehouses)
    }

    /// A warehouse other than `home`, when there is one (clause 2.4.1.5, 2.5.1.2).
    fn other_warehouse(&mut self, home: u64) -> u64 {
        if self.spec.warehouses == 1 {
            return home;
        }
        let w = uniform(&mut self.rng, 1, self.spec.warehouses - 1);
        if w >= home {
            w + 1
        } else {
            w
        }
    }

    fn customer_id(&mut self) -> u64 {
        self.nu.nurand(&mut self.rng, 1023, 1, CUSTOMERS)
    }

    /// A last name by NURand(255, 0, 999) into `name`, as a literal.
    fn customer_last(&mut self) -> String {
        let n = self.nu.nurand(&mut self.rng, 255, 0, 999);
        last_name(n, &mut self.name);
        let mut lit = String::new();
        push_literal(&mut lit, &self.name, &self.f);
        lit
    }

    /// The customer chosen by last name: the one at position ceil(n / 2) of those sorted by
    /// first name (clause 2.5.2.2). `column` holds c_id in the rows of the sorted SELECT.
    fn middle_customer(&self, column: usize) -> Result<Option<u64>, DbError> {
        let n = self.rows.len();
        if n == 0 {
            return Ok(None);
        }
        Ok(Some(self.int(n.div_ceil(2) - 1, column)? as u64))
    }

    fn new_order(&mut self) -> Result<End, DbError> {
        let w = self.warehouse();
        let d = uniform(&mut self.rng, 1, DISTRICTS);
        let c = self.customer_id();
        let lines = uniform(&mut self.rng, 5, 15);
        let rollback = uniform(&mut self.rng, 1, 100) == 1;
        let mut items = Vec::with_capacity(lines as usize);
        let mut all_local = 1;
        for i in 1..=lines {
            let mut item = self.nu.nurand(&mut self.rng, 8191, 1, ITEMS) as i64;
            // sysbench-tpcc's unused item sits on the next to last line.
            if rollback && i == lines - 1 {
                item = -1;
            }
            let supply = if uniform(&mut self.rng, 1, 100) != 1 {
                w
            } else {
                self.other_warehouse(w)
            };
            if supply != w {
                all_local = 0;
            }
            items.push((item, supply, uniform(&mut self.rng, 1, 10) as i64));
        }
        self.begin(true)?;
        self.set(format_args!(
            "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = {w} \
             AND c_w_id = w_id AND c_d_id = {d} AND c_id = {c}"
        ));
        self.fetch()?;
        let (discount, w_tax) = (self.cents(0, 0)?, self.cents(0, 3)?);
        let fu = self.f.for_update;
        self.set(format_args!(
            "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = {w} AND d_id = {d}{fu}"
        ));
        self.fetch()?;
        let (o, d_tax) = (self.int(0, 0)?, self.cents(0, 1)?);
        self.set(format_args!(
            "UPDATE district SET d_next_o_id = {} WHERE d_id = {d} AND d_w_id= {w}",
            o.saturating_add(1)
        ));
        self.exec()?;
        let now = self.f.now;
        self.set(format_args!(
            "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) \
             VALUES ({o},{d},{w},{c},{now},{lines},{all_local})"
        ));
        self.exec()?;
        self.set(format_args!(
            "INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES ({o},{d},{w})"
        ));
        self.exec()?;
        for (n, &(item, supply, qty)) in items.iter().enumerate() {
            self.set(format_args!(
                "SELECT i_price, i_name, i_data FROM item WHERE i_id = {item}"
            ));
            if self.fetch()? == 0 {
                self.set(format_args!("ROLLBACK"));
                self.exec()?;
                return Ok(End::RolledBack);
            }
            let price = self.cents(0, 0)?;
            self.set(format_args!(
                "SELECT s_quantity, s_data, s_dist_{d:02} s_dist FROM stock WHERE s_i_id = {item} \
                 AND s_w_id= {supply}{fu}"
            ));
            self.fetch()?;
            let stock = self.int(0, 0)?;
            let dist = self.text_of(0, 2)?;
            // Values the server returned: saturating, so a lying server gets nonsense written
            // back, never a wrapped number.
            let left = if stock > qty {
                stock.saturating_sub(qty)
            } else {
                stock.saturating_sub(qty).saturating_add(91)
            };
            self.set(format_args!(
                "UPDATE stock SET s_quantity = {left} WHERE s_i_id = {item} AND s_w_id= {supply}"
            ));
            self.exec()?;
            // qty * price * (1 + w_tax + d_tax) * (1 - discount), in hundredths, rounded.
            let amount = line_amount(qty, price, w_tax.saturating_add(d_tax), discount);
            self.sql.clear();
            let _ = write!(
                self.sql,
                "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
                 ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES \
                 ({o},{d},{w},{},{item},{supply},{qty},{},",
                n + 1,
                hundredths_text(amount)
            );
            push_read_back(&mut self.sql, &dist, &self.f);
            self.sql.push(')');
            self.exec()?;
        }
        self.commit()?;
        Ok(End::Committed)
    }

    fn payment(&mut self) -> Result<End, DbError> {
        let w = self.warehouse();
        let d = uniform(&mut self.rng, 1, DISTRICTS);
        let mut c = self.customer_id();
        let h = uniform(&mut self.rng, 1, 5_000) as i64;
        let last = self.customer_last();
        let by_name = uniform(&mut self.rng, 1, 100) <= 60;
        let (cw, cd) = if uniform(&mut self.rng, 1, 100) <= 85 {
            (w, d)
        } else {
            let cw = self.other_warehouse(w);
            (cw, uniform(&mut self.rng, 1, DISTRICTS))
        };
        self.begin(true)?;
        self.set(format_args!(
            "UPDATE warehouse SET w_ytd = w_ytd + {h} WHERE w_id = {w}"
        ));
        self.exec()?;
        self.set(format_args!(
            "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse \
             WHERE w_id = {w}"
        ));
        self.fetch()?;
        let w_name = self.text_of(0, 5)?;
        self.set(format_args!(
            "UPDATE district SET d_ytd = d_ytd + {h} WHERE d_w_id = {w} AND d_id= {d}"
        ));
        self.exec()?;
        self.set(format_args!(
            "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district \
             WHERE d_w_id = {w} AND d_id = {d}"
        ));
        self.fetch()?;
        let d_name = self.text_of(0, 5)?;
        if by_name {
            self.set(format_args!(
                "SELECT count(c_id) namecnt FROM customer WHERE c_w_id = {cw} AND c_d_id= {cd} \
                 AND c_last={last}"
            ));
            self.fetch()?;
            self.set(format_args!(
                "SELECT c_id FROM customer WHERE c_w_id = {cw} AND c_d_id= {cd} \
                 AND c_last={last} ORDER BY c_first"
            ));
            self.fetch()?;
            c = self.middle_customer(0)?.unwrap_or(c);
        }
        let fu = self.f.for_update;
        self.set(format_args!(
            "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, \
             c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_since \
             FROM customer WHERE c_w_id = {cw} AND c_d_id= {cd} AND c_id={c}{fu}"
        ));
        self.fetch()?;
        let credit = self.text_of(0, 9)?;
        let balance = hundredths_text(self.cents(0, 12)?.saturating_sub(h * 100));
        let ytd = hundredths_text(self.cents(0, 13)?.saturating_add(h * 100));
        let key = format!("WHERE c_w_id = {cw} AND c_d_id={cd} AND c_id={c}");
        if credit == "BC" {
            self.set(format_args!("SELECT c_data FROM customer {key}"));
            self.fetch()?;
            let old = self.text_of(0, 0)?;
            let mut data = format!("| {c:4} {cd:2} {cw:4} {d:2} {w:4} ${h:4}.00 {old}");
            // Cut at 500 characters, as sysbench-tpcc's string.sub (c_data is ASCII as loaded;
            // a server's other bytes are cut on a character boundary all the same).
            if let Some((at, _)) = data.char_indices().nth(500) {
                data.truncate(at);
            }
            self.sql.clear();
            let _ = write!(
                self.sql,
                "UPDATE customer SET c_balance={balance}, c_ytd_payment={ytd}, c_data="
            );
            push_read_back(&mut self.sql, &data, &self.f);
            let _ = write!(self.sql, " {key}");
            self.exec()?;
        } else {
            self.set(format_args!(
                "UPDATE customer SET c_balance={balance}, c_ytd_payment={ytd} {key}"
            ));
            self.exec()?;
        }
        let now = self.f.now;
        self.sql.clear();
        let _ = write!(
            self.sql,
            "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, \
             h_data) VALUES ({cd},{cw},{c},{d},{w},{now},{h},"
        );
        let h_data = format!("{w_name:>10} {d_name:>10}   ");
        push_read_back(&mut self.sql, &h_data, &self.f);
        self.sql.push(')');
        self.exec()?;
        self.commit()?;
        Ok(End::Committed)
    }

    fn order_status(&mut self) -> Result<End, DbError> {
        let w = self.warehouse();
        let d = uniform(&mut self.rng, 1, DISTRICTS);
        let mut c = self.customer_id();
        let last = self.customer_last();
        let by_name = uniform(&mut self.rng, 1, 100) <= 60;
        self.begin(false)?;
        if by_name {
            self.set(format_args!(
                "SELECT count(c_id) namecnt FROM customer WHERE c_w_id = {w} AND c_d_id= {d} \
                 AND c_last={last}"
            ));
            self.fetch()?;
            self.set(format_args!(
                "SELECT c_balance, c_first, c_middle, c_id FROM customer WHERE c_w_id = {w} \
                 AND c_d_id= {d} AND c_last={last} ORDER BY c_first"
            ));
            self.fetch()?;
            c = self.middle_customer(3)?.unwrap_or(c);
        } else {
            self.set(format_args!(
                "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = {w} \
                 AND c_d_id={d} AND c_id={c}"
            ));
            self.fetch()?;
        }
        self.set(format_args!(
            "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = {w} AND o_d_id = {d} \
             AND o_c_id = {c} ORDER BY o_id DESC"
        ));
        let o = if self.fetch()? > 0 {
            self.int(0, 0)?
        } else {
            0
        };
        self.set(format_args!(
            "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line \
             WHERE ol_w_id = {w} AND ol_d_id = {d}  AND ol_o_id = {o}"
        ));
        self.fetch()?;
        self.commit()?;
        Ok(End::Committed)
    }

    fn delivery(&mut self) -> Result<End, DbError> {
        let w = self.warehouse();
        let carrier = uniform(&mut self.rng, 1, 10);
        let (now, fu) = (self.f.now, self.f.for_update);
        self.begin(true)?;
        for d in 1..=DISTRICTS {
            self.set(format_args!(
                "SELECT no_o_id FROM new_orders WHERE no_d_id = {d} AND no_w_id = {w} \
                 ORDER BY no_o_id ASC LIMIT 1{fu}"
            ));
            if self.fetch()? == 0 {
                continue;
            }
            let o = self.int(0, 0)?;
            self.set(format_args!(
                "DELETE FROM new_orders WHERE no_o_id = {o} AND no_d_id = {d} AND no_w_id = {w}"
            ));
            self.exec()?;
            self.set(format_args!(
                "SELECT o_c_id FROM orders WHERE o_id = {o} AND o_d_id = {d} AND o_w_id = {w}"
            ));
            self.fetch()?;
            let c = self.int(0, 0)?;
            self.set(format_args!(
                "UPDATE orders SET o_carrier_id = {carrier} WHERE o_id = {o} AND o_d_id = {d} \
                 AND o_w_id = {w}"
            ));
            self.exec()?;
            self.set(format_args!(
                "UPDATE order_line SET ol_delivery_d = {now} WHERE ol_o_id = {o} \
                 AND ol_d_id = {d} AND ol_w_id = {w}"
            ));
            self.exec()?;
            self.set(format_args!(
                "SELECT SUM(ol_amount) sm FROM order_line WHERE ol_o_id = {o} AND ol_d_id = {d} \
                 AND ol_w_id = {w}"
            ));
            self.fetch()?;
            let total = hundredths_text(self.cents(0, 0)?);
            self.set(format_args!(
                "UPDATE customer SET c_balance = c_balance + {total}, \
                 c_delivery_cnt = c_delivery_cnt + 1 WHERE c_id = {c} AND c_d_id = {d} \
                 AND c_w_id = {w}"
            ));
            self.exec()?;
        }
        self.commit()?;
        Ok(End::Committed)
    }

    fn stock_level(&mut self) -> Result<End, DbError> {
        let w = self.warehouse();
        let d = uniform(&mut self.rng, 1, DISTRICTS);
        let level = uniform(&mut self.rng, 10, 20);
        self.begin(false)?;
        self.set(format_args!(
            "SELECT d_next_o_id FROM district WHERE d_id = {d} AND d_w_id= {w}"
        ));
        self.fetch()?;
        let o = self.int(0, 0)?;
        self.set(format_args!(
            "SELECT COUNT(DISTINCT (s_i_id)) FROM order_line, stock WHERE ol_w_id = {w} \
             AND ol_d_id = {d} AND ol_o_id < {o} AND ol_o_id >= {} AND s_w_id= {w} \
             AND s_i_id=ol_i_id AND s_quantity < {level}",
            o.saturating_sub(20)
        ));
        self.fetch()?;
        self.commit()?;
        Ok(End::Committed)
    }

    /// Whether the next transaction is in the warm-up, or None once the step's time is over.
    fn phase(&mut self) -> Option<bool> {
        match self.spec.stop {
            Stop::Events(_) => Some(false),
            Stop::Time { warmup, run } => {
                let now = Instant::now();
                let (warm_until, end) = *self
                    .clock
                    .get_or_insert_with(|| (now + warmup, now + warmup + run));
                (now < end).then_some(now < warm_until)
            }
        }
    }
}

impl Role for Client {
    fn op(&mut self) -> Result<OpOutcome, OpError> {
        let Some(warmup) = self.phase() else {
            return Ok(OpOutcome::Finished);
        };
        let mix = self.spec.mix;
        let t = mix.pick(uniform(&mut self.rng, 0, mix.total() - 1));
        self.sent = 0;
        let r = match t {
            NEW_ORDER => self.new_order(),
            PAYMENT => self.payment(),
            ORDER_STATUS => self.order_status(),
            DELIVERY => self.delivery(),
            _ => self.stock_level(),
        };
        let kind = if warmup { WARMUP } else { t };
        match r {
            Ok(end) => {
                if warmup {
                    if t == NEW_ORDER && end == End::Committed {
                        self.spec
                            .counts
                            .warmup_new_orders
                            .fetch_add(1, Ordering::Relaxed);
                    }
                    return Ok(OpOutcome::Done { kind, rows: 1 });
                }
                self.spec.counts.statements[t].fetch_add(self.sent, Ordering::Relaxed);
                let kind = if end == End::RolledBack {
                    ROLLED_BACK
                } else {
                    t
                };
                Ok(OpOutcome::Done { kind, rows: 1 })
            }
            Err(e) => {
                // Deadlocks, serialization failures, lock wait timeouts (as --ignore-errors
                // decides them): rolled back and a new transaction drawn, as sysbench-tpcc's
                // restarted event.
                let retried = e.transient;
                if retried {
                    self.sql.clear();
                    self.sql.push_str("ROLLBACK");
                    let _ = self.conn.run_text(&self.sql);
                }
                Err(OpError {
                    kind,
                    class: if retried {
                        ErrorClass::Retried
                    } else {
                        ErrorClass::Failed
                    },
                    cause: (!retried).then(|| e.as_cause()),
                    message: e.message,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_lines_amount_is_rounded_and_cannot_overflow() {
        // 3 × 12.34 × 1.15 × 0.90 = 38.3157 → 38.32
        assert_eq!(super::line_amount(3, 1234, 15, 10), 3832);
        assert_eq!(super::line_amount(10, i64::MAX, 40, 0), i64::MAX);
        assert_eq!(super::line_amount(1, i64::MIN, 0, 0), i64::MIN);
    }
}
