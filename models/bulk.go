package models

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// The rows written many at a time (a settlement run writes a step, an
// event, a delivery and an outbox entry for each of a batch's hundreds of
// orders; a ledger transaction has several lines) are inserted by the
// functions below. On Postgres a batch is one INSERT … SELECT FROM
// unnest(…) whose parameters are one array per column: a short statement
// whatever the batch's size, which gorm does not reflect over and
// Postgres parses once, where gorm's own multi-row INSERT
// has a parameter per value (3,500 for 500 steps). On SQLite, which has no
// arrays, gorm writes them. Each writes every column of its model;
// events, whose deliveries refer to their seq, take their serial keys in
// the same one statement and get them back, as gorm would set them.
// TestBulkInsertsWriteEveryColumn holds them to it.

// column is one column of a bulk insert: its name, its Postgres type and
// a slice of one value per row.
type column struct {
	name, typ string
	values    any
}

// unnestInsert is the statement that inserts the rows of cols into
// table, and its arguments. When serial names the table's serial column,
// the statement also takes one value of its sequence per row, gives them
// to the rows in rising order (row i the i-th smallest, whatever order
// Postgres writes the rows in) and returns them; it first takes each of
// locks, advisory locks held shared until the transaction ends (an
// aggregate over them ends before a row of the join that takes the
// values is made).
func unnestInsert(table, serial string, cols []column, locks []int64) (string, []any) {
	names := make([]string, len(cols))
	params := make([]string, len(cols))
	args := make([]any, len(cols))
	for i, c := range cols {
		names[i] = c.name
		params[i] = fmt.Sprintf("$%d::%s[]", i+1, c.typ)
		args[i] = c.values
	}
	if serial == "" {
		return "INSERT INTO " + table + " (" + strings.Join(names, ", ") + ") SELECT * FROM unnest(" + strings.Join(params, ", ") + ")", args
	}
	aliases := make([]string, len(cols))
	picks := make([]string, len(cols))
	for i := range cols {
		aliases[i] = fmt.Sprintf("c%d", i)
		picks[i] = "u." + aliases[i]
	}
	locked := ""
	if len(locks) > 0 {
		args = append(args, locks)
		locked = fmt.Sprintf("(SELECT count(pg_advisory_xact_lock_shared(l)) FROM unnest($%d::int8[]) l) locked, ", len(args))
	}
	q := fmt.Sprintf(`INSERT INTO %[1]s (%[2]s, %[3]s)
		SELECT k.keys[u.ord], %[4]s FROM
			(SELECT array_agg(v ORDER BY v) AS keys FROM
				(SELECT nextval(pg_get_serial_sequence('%[1]s', '%[2]s')) AS v FROM %[8]sgenerate_series(1, cardinality($1::%[5]s[]))) taken) k,
			unnest(%[6]s) WITH ORDINALITY AS u(%[7]s, ord)
		RETURNING %[2]s`,
		table, serial, strings.Join(names, ", "), strings.Join(picks, ", "), cols[0].typ, strings.Join(params, ", "), strings.Join(aliases, ", "), locked)
	return q, args
}

func translate(db *gorm.DB, err error) error {
	if t, ok := db.Dialector.(gorm.ErrorTranslator); ok && err != nil {
		return t.Translate(err)
	}
	return err
}

// insert writes rows into table: on SQLite through gorm, on Postgres in
// one statement, as the columns cols makes, one array each. When serial
// names the table's serial column, the rows take its values in their
// order, as one insert after another would, and setKey sets them.
func insert[T any](db *gorm.DB, table string, rows []T, serial string, setKey func(*T, int64), locks []int64, cols func() []column) error {
	if len(rows) == 0 {
		return nil
	}
	if !IsPostgres(db) {
		return db.CreateInBatches(rows, 500).Error
	}
	q, args := unnestInsert(table, serial, cols(), locks)
	if serial == "" {
		_, err := db.Statement.ConnPool.ExecContext(db.Statement.Context, q, args...)
		return translate(db, err)
	}
	keys, err := queryKeys(db, q, args)
	if err != nil {
		return err
	}
	if len(keys) != len(rows) {
		return fmt.Errorf("insert %d rows into %s: %d written", len(rows), table, len(keys))
	}
	slices.Sort(keys) // row i took the i-th smallest
	for i, k := range keys {
		setKey(&rows[i], k)
	}
	return nil
}

// InsertOrderSteps inserts steps. Their IDs are the column's: on Postgres
// they are not read back (nobody reads them).
func InsertOrderSteps(db *gorm.DB, steps []OrderStep) error {
	return insert(db, "order_steps", steps, "", nil, nil, func() []column {
		n := len(steps)
		orderID, actor, status, event, note, recipient := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		at, pushID := make([]time.Time, n), make([]*int64, n)
		for i, s := range steps {
			orderID[i], at[i], actor[i], status[i], event[i], note[i], pushID[i], recipient[i] = s.OrderID, s.At, s.Actor, s.Status, s.Event, s.Note, s.PushID, s.Recipient
		}
		return []column{
			{"order_id", "text", orderID}, {"at", "timestamptz", at}, {"actor", "text", actor}, {"status", "text", status},
			{"event", "text", event}, {"note", "text", note}, {"push_id", "int8", pushID}, {"recipient", "text", recipient},
		}
	})
}

// InsertEvents inserts evs, setting their Seq. On Postgres it holds the
// EventsLock of each of their partners and environments, shared, from
// before they take their Seq until the transaction ends.
func InsertEvents(db *gorm.DB, evs []Event) error {
	locks := make([]int64, len(evs))
	for i, e := range evs {
		locks[i] = EventsLock(e.PartnerID, e.Environment)
	}
	slices.Sort(locks)
	locks = slices.Compact(locks)
	return insert(db, "events", evs, "seq", func(e *Event, seq int64) { e.Seq = seq }, locks, func() []column {
		n := len(evs)
		id, partner, env, typ := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		data, created := make([][]byte, n), make([]time.Time, n)
		for i, e := range evs {
			id[i], partner[i], env[i], typ[i], data[i], created[i] = e.ID, e.PartnerID, e.Environment, e.Type, e.Data, e.CreatedAt
		}
		return []column{
			{"id", "text", id}, {"partner_id", "text", partner}, {"environment", "text", env}, {"type", "text", typ},
			{"data", "bytea", data}, {"created_at", "timestamptz", created},
		}
	})
}

// InsertWebhookDeliveries inserts ds.
func InsertWebhookDeliveries(db *gorm.DB, ds []WebhookDelivery) error {
	return insert(db, "webhook_deliveries", ds, "", nil, nil, func() []column {
		n := len(ds)
		id, endpoint, subject, state, lastError := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		seq, followed, attempts, lastStatus := make([]int64, n), make([]bool, n), make([]int64, n), make([]int64, n)
		created, delivered, finished := make([]time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
		for i, d := range ds {
			id[i], seq[i], endpoint[i], subject[i], followed[i], state[i] = d.ID, d.EventSeq, d.EndpointID, d.Subject, d.Followed, d.State
			attempts[i], lastStatus[i], lastError[i] = int64(d.Attempts), int64(d.LastStatus), d.LastError
			created[i], delivered[i], finished[i] = d.CreatedAt, d.DeliveredAt, d.FinishedAt
		}
		return []column{
			{"id", "text", id}, {"event_seq", "int8", seq}, {"endpoint_id", "text", endpoint}, {"subject", "text", subject},
			{"followed", "bool", followed}, {"state", "text", state}, {"attempts", "int8", attempts}, {"last_status", "int8", lastStatus},
			{"last_error", "text", lastError}, {"created_at", "timestamptz", created}, {"delivered_at", "timestamptz", delivered},
			{"finished_at", "timestamptz", finished},
		}
	})
}

// InsertOutboxEntries inserts es; an entry without a CreatedAt gets
// now's, as gorm would give it.
func InsertOutboxEntries(db *gorm.DB, es []*OutboxEntry) error {
	return insert(db, "outbox_entries", es, "", nil, nil, func() []column {
		n := len(es)
		now := db.NowFunc()
		id, taskType, queue, requestID, lastError := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		payload, created, enqueued, attempts := make([][]byte, n), make([]time.Time, n), make([]*time.Time, n), make([]int64, n)
		for i, e := range es {
			if e.CreatedAt.IsZero() {
				e.CreatedAt = now
			}
			id[i], taskType[i], payload[i], queue[i], requestID[i] = e.ID, e.TaskType, e.Payload, e.Queue, e.RequestID
			created[i], enqueued[i], attempts[i], lastError[i] = e.CreatedAt, e.EnqueuedAt, int64(e.Attempts), e.LastError
		}
		return []column{
			{"id", "uuid", id}, {"task_type", "text", taskType}, {"payload", "bytea", payload}, {"queue", "text", queue},
			{"request_id", "text", requestID}, {"created_at", "timestamptz", created}, {"enqueued_at", "timestamptz", enqueued},
			{"attempts", "int8", attempts}, {"last_error", "text", lastError},
		}
	})
}

// InsertLedgerEntries inserts es. Their IDs are the column's, as
// InsertOrderSteps' are.
func InsertLedgerEntries(db *gorm.DB, es []LedgerEntry) error {
	return insert(db, "ledger_entries", es, "", nil, nil, func() []column {
		n := len(es)
		txn, account, partner, env := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		currency, kind, amount, created := make([]string, n), make([]string, n), make([]int64, n), make([]time.Time, n)
		order, refund, payout, cs := make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
		for i, e := range es {
			txn[i], account[i], partner[i], env[i] = e.TxnID, e.Account, e.PartnerID, e.Environment
			currency[i], kind[i], amount[i], created[i] = e.Currency, e.Kind, e.AmountCents, e.CreatedAt
			order[i], refund[i], payout[i], cs[i] = e.OrderID, e.RefundID, e.PayoutID, e.CaseID
		}
		return []column{
			{"txn_id", "text", txn}, {"account", "text", account}, {"partner_id", "text", partner}, {"environment", "text", env},
			{"currency", "text", currency}, {"amount_cents", "int8", amount}, {"kind", "text", kind}, {"order_id", "text", order},
			{"refund_id", "text", refund}, {"payout_id", "text", payout}, {"case_id", "text", cs}, {"created_at", "timestamptz", created},
		}
	})
}

// queryKeys runs the insert q and returns the keys it returns.
func queryKeys(db *gorm.DB, q string, args []any) ([]int64, error) {
	rows, err := db.Statement.ConnPool.QueryContext(db.Statement.Context, q, args...)
	if err != nil {
		return nil, translate(db, err)
	}
	defer rows.Close()
	var keys []int64
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, translate(db, rows.Err())
}
