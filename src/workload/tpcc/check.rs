//! The consistency conditions of the TPC-C specification (clause 3.3.2), checked after a run
//! step: each is one query counting the rows, districts or warehouses that break it, so 0 means
//! it held. Amounts are compared to within half a cent, since SQLite keeps decimals as binary
//! floating point. Condition 11 holds only for a database just loaded and is not checked.

use std::sync::Arc;

use crate::dbms::{Budget, Dbms};
use crate::results::tpcc::TpccCheck;

/// (number, what holds, the query counting what breaks it).
pub const CONDITIONS: [(u8, &str, &str); 11] = [
    (
        1,
        "W_YTD = sum(D_YTD) per warehouse",
        "SELECT count(*) FROM warehouse WHERE ABS(w_ytd - (SELECT sum(d_ytd) FROM district \
         WHERE d_w_id = w_id)) > 0.004",
    ),
    (
        2,
        "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district",
        "SELECT count(*) FROM district WHERE d_next_o_id - 1 <> (SELECT max(o_id) FROM orders \
         WHERE o_w_id = d_w_id AND o_d_id = d_id) OR d_next_o_id - 1 <> COALESCE((SELECT \
         max(no_o_id) FROM new_orders WHERE no_w_id = d_w_id AND no_d_id = d_id), d_next_o_id - 1)",
    ),
    (
        3,
        "max(NO_O_ID) - min(NO_O_ID) + 1 = new orders per district",
        "SELECT count(*) FROM (SELECT no_w_id, no_d_id FROM new_orders GROUP BY no_w_id, \
         no_d_id HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)) x",
    ),
    (
        4,
        "sum(O_OL_CNT) = order lines per district",
        "SELECT count(*) FROM district WHERE (SELECT COALESCE(sum(o_ol_cnt), 0) FROM orders \
         WHERE o_w_id = d_w_id AND o_d_id = d_id) <> (SELECT count(*) FROM order_line \
         WHERE ol_w_id = d_w_id AND ol_d_id = d_id)",
    ),
    (
        5,
        "O_CARRIER_ID is null exactly for the orders with a new order",
        "SELECT count(*) FROM orders LEFT JOIN new_orders ON no_w_id = o_w_id AND no_d_id = \
         o_d_id AND no_o_id = o_id WHERE (o_carrier_id IS NULL AND no_o_id IS NULL) OR \
         (o_carrier_id IS NOT NULL AND no_o_id IS NOT NULL)",
    ),
    (
        6,
        "O_OL_CNT = the order's lines, per order",
        "SELECT count(*) FROM orders LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, count(*) n \
         FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id) l ON l.ol_w_id = o_w_id AND \
         l.ol_d_id = o_d_id AND l.ol_o_id = o_id WHERE COALESCE(l.n, 0) <> o_ol_cnt",
    ),
    (
        7,
        "OL_DELIVERY_D is null exactly for the lines of orders without a carrier",
        "SELECT count(*) FROM order_line JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id \
         AND o_id = ol_o_id WHERE (ol_delivery_d IS NULL AND o_carrier_id IS NOT NULL) OR \
         (ol_delivery_d IS NOT NULL AND o_carrier_id IS NULL)",
    ),
    (
        8,
        "W_YTD = sum(H_AMOUNT) per warehouse",
        "SELECT count(*) FROM warehouse WHERE ABS(w_ytd - (SELECT COALESCE(sum(h_amount), 0) \
         FROM history WHERE h_w_id = w_id)) > 0.004",
    ),
    (
        9,
        "D_YTD = sum(H_AMOUNT) per district",
        "SELECT count(*) FROM district WHERE ABS(d_ytd - (SELECT COALESCE(sum(h_amount), 0) \
         FROM history WHERE h_w_id = d_w_id AND h_d_id = d_id)) > 0.004",
    ),
    (
        10,
        "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) per customer",
        "SELECT count(*) FROM customer LEFT JOIN (SELECT o_w_id, o_d_id, o_c_id, sum(ol_amount) \
         s FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = \
         o_id WHERE ol_delivery_d IS NOT NULL GROUP BY o_w_id, o_d_id, o_c_id) dl ON \
         dl.o_w_id = c_w_id AND dl.o_d_id = c_d_id AND dl.o_c_id = c_id LEFT JOIN (SELECT \
         h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) s FROM history GROUP BY h_c_w_id, h_c_d_id, \
         h_c_id) h ON h.h_c_w_id = c_w_id AND h.h_c_d_id = c_d_id AND h.h_c_id = c_id WHERE \
         ABS(c_balance - (COALESCE(dl.s, 0) - COALESCE(h.s, 0))) > 0.004",
    ),
    (
        12,
        "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) per customer",
        "SELECT count(*) FROM customer LEFT JOIN (SELECT o_w_id, o_d_id, o_c_id, sum(ol_amount) \
         s FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = \
         o_id WHERE ol_delivery_d IS NOT NULL GROUP BY o_w_id, o_d_id, o_c_id) dl ON \
         dl.o_w_id = c_w_id AND dl.o_d_id = c_d_id AND dl.o_c_id = c_id WHERE \
         ABS(c_balance + c_ytd_payment - COALESCE(dl.s, 0)) > 0.004",
    ),
];

/// Every condition checked on one connection (untimed, bounded by --ddl-timeout). A query that
/// fails records its error and the others still run.
pub fn run(dbms: &Arc<dyn Dbms>) -> anyhow::Result<Vec<TpccCheck>> {
    let mut conn = dbms.connect()?;
    conn.set_budget(Budget::Long);
    Ok(CONDITIONS
        .iter()
        .map(|&(number, holds, sql)| {
            let (violations, error) = match conn.query_i64(sql) {
                Ok(n) => (n.map(|n| n.max(0) as u64), None),
                Err(e) => (None, Some(e.message)),
            };
            TpccCheck {
                condition: number,
                holds: holds.to_string(),
                held: violations == Some(0),
                violations,
                error,
            }
        })
        .collect())
}

/// The sum of every district's next order number: it grows by one with each committed
/// New-Order, so two readings bound what the run committed.
pub fn order_numbers(dbms: &Arc<dyn Dbms>) -> anyhow::Result<u64> {
    let mut conn = dbms.connect()?;
    conn.set_budget(Budget::Long);
    // A NULL among them is no reading (sum() would skip it).
    match conn.query_i64(
        "SELECT CASE WHEN count(*) = count(d_next_o_id) THEN sum(d_next_o_id) END FROM district",
    )? {
        Some(n) if n >= 0 => Ok(n as u64),
        _ => anyhow::bail!("the districts' order numbers are not all numbers"),
    }
}
