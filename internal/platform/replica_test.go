package platform_test

import (
	"os"
	"testing"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/platform"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/models"
)

// Against a real streaming replica made with pg_basebackup: the reads of
// queries made with models.FromReplica go to the replica; plain reads,
// reads in a transaction and writes (a write made through FromReplica
// too) go to the primary, and the replica streams them.
func TestReplicaTakesOnlyTheReadsGivenToIt(t *testing.T) {
	t.Parallel()
	if os.Getenv("DOMAIND_TEST_DATABASE_URL") == "" {
		t.Skip("runs a Postgres primary and replica: set DOMAIND_TEST_DATABASE_URL to run the real-server tests")
	}
	primary, replica := platformtest.NewReplicatedPostgres(t)
	db, err := platform.OpenPostgres(primary, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := platform.UseReplica(db, replica, 4); err != nil {
		t.Fatal(err)
	}
	onReplica := func(q *gorm.DB) bool {
		var recovering bool
		if err := q.Raw("SELECT pg_is_in_recovery()").Scan(&recovering).Error; err != nil {
			t.Fatal(err)
		}
		return recovering
	}
	if onReplica(db) {
		t.Error("a plain read went to the replica")
	}
	if !onReplica(models.FromReplica(db)) {
		t.Error("a read made with FromReplica went to the primary")
	}
	db.Transaction(func(tx *gorm.DB) error {
		if onReplica(models.FromReplica(tx)) {
			t.Error("a read in a transaction went to the replica")
		}
		return nil
	})

	if err := db.Exec("CREATE TABLE notes (id int PRIMARY KEY, body text)").Error; err != nil {
		t.Fatal(err)
	}
	if err := models.FromReplica(db).Exec("INSERT INTO notes VALUES (1, 'written through FromReplica')").Error; err != nil {
		t.Fatalf("a write made with FromReplica: %v (a replica refuses writes)", err)
	}
	testtool.WaitFor(t, "the row streamed to the replica", func() bool {
		var n int64
		err := models.FromReplica(db).Raw("SELECT count(*) FROM notes").Scan(&n).Error
		return err == nil && n == 1
	})
}
