package models

import "gorm.io/gorm"

// Step 9 as 0d7c9de rewrote it in place (65f6bc0 had kept one counter row
// per TLD): the trigger-kept counts of public listings, on Postgres only.

// listingCountsDDL keeps, on Postgres, the number of public listings in
// total (under the empty TLD) and per TLD, exact and transactional, as
// signed deltas: every write appends rows (tld, ±n) and never updates one,
// so writers do not queue on a counter row or deadlock over it; a count is
// the sum of a TLD's rows, and CompactListingCounts folds them now and then.
// Inserts and deletes add one delta per TLD per statement; an update adds
// deltas only when it changes what is counted (approval, visibility, TLD).
var listingCountsDDL = []string{
	`CREATE TABLE IF NOT EXISTS listing_count_deltas (id bigserial PRIMARY KEY, tld varchar(63) NOT NULL, n bigint NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS idx_listing_count_deltas_tld ON listing_count_deltas (tld)`,
	`CREATE OR REPLACE FUNCTION listing_counts_statement() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF TG_OP = 'INSERT' THEN
			INSERT INTO listing_count_deltas (tld, n)
				SELECT v.t, count(*) FROM new_rows, LATERAL (VALUES (''), (new_rows.tld)) v(t)
				WHERE approved AND marketplace_visible GROUP BY v.t;
		ELSIF TG_OP = 'DELETE' THEN
			INSERT INTO listing_count_deltas (tld, n)
				SELECT v.t, -count(*) FROM old_rows, LATERAL (VALUES (''), (old_rows.tld)) v(t)
				WHERE approved AND marketplace_visible GROUP BY v.t;
		ELSE -- TRUNCATE
			DELETE FROM listing_count_deltas;
		END IF;
		RETURN NULL;
	END $$`,
	`CREATE OR REPLACE FUNCTION listing_counts_row() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF OLD.approved AND OLD.marketplace_visible THEN
			INSERT INTO listing_count_deltas (tld, n) VALUES ('', -1), (OLD.tld, -1);
		END IF;
		IF NEW.approved AND NEW.marketplace_visible THEN
			INSERT INTO listing_count_deltas (tld, n) VALUES ('', 1), (NEW.tld, 1);
		END IF;
		RETURN NULL;
	END $$`,
	`DROP TRIGGER IF EXISTS listing_counts_insert ON listings`,
	`CREATE TRIGGER listing_counts_insert AFTER INSERT ON listings REFERENCING NEW TABLE AS new_rows
		FOR EACH STATEMENT EXECUTE FUNCTION listing_counts_statement()`,
	`DROP TRIGGER IF EXISTS listing_counts_delete ON listings`,
	`CREATE TRIGGER listing_counts_delete AFTER DELETE ON listings REFERENCING OLD TABLE AS old_rows
		FOR EACH STATEMENT EXECUTE FUNCTION listing_counts_statement()`,
	`DROP TRIGGER IF EXISTS listing_counts_truncate ON listings`,
	`CREATE TRIGGER listing_counts_truncate AFTER TRUNCATE ON listings
		FOR EACH STATEMENT EXECUTE FUNCTION listing_counts_statement()`,
	`DROP TRIGGER IF EXISTS listing_counts_update ON listings`,
	`CREATE TRIGGER listing_counts_update AFTER UPDATE OF approved, marketplace_visible, tld ON listings FOR EACH ROW
		WHEN (OLD.approved IS DISTINCT FROM NEW.approved OR OLD.marketplace_visible IS DISTINCT FROM NEW.marketplace_visible
		      OR OLD.tld IS DISTINCT FROM NEW.tld)
		EXECUTE FUNCTION listing_counts_row()`,
	`DELETE FROM listing_count_deltas`,
	`INSERT INTO listing_count_deltas (tld, n)
		SELECT '', count(*) FROM listings WHERE approved AND marketplace_visible
		UNION ALL SELECT tld, count(*) FROM listings WHERE approved AND marketplace_visible GROUP BY tld`,
}

func migrateV9(tx *gorm.DB) error {
	if !IsPostgres(tx) {
		return nil
	}
	return execAll(tx, listingCountsDDL)
}
