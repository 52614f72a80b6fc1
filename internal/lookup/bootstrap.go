package lookup

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/rdap"
	"github.com/domaind/domaind/models"
)

// IANABootstrapURL is where IANA publishes the RDAP bootstrap file for DNS.
const IANABootstrapURL = "https://data.iana.org/rdap/dns.json"

// StoredBootstrap returns the newest of the snapshot built into the binary
// and the copy a refresh stored in the database.
func StoredBootstrap(ctx context.Context, db *gorm.DB) (*rdap.Bootstrap, error) {
	builtIn := rdap.DefaultBootstrap()
	var row models.RDAPBootstrap
	err := db.WithContext(ctx).First(&row, "id = ?", 1).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return builtIn, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load stored RDAP bootstrap: %w", err)
	}
	stored, err := rdap.ParseBootstrap(row.Data)
	if err != nil || !stored.Publication().After(builtIn.Publication()) {
		return builtIn, nil // a copy that does not parse is replaced at the next refresh
	}
	return stored, nil
}

// RefreshBootstrap fetches the bootstrap file at source and, when IANA
// published it after the one client uses, switches client to it and stores
// it, so that every worker started from then on begins with it (workers
// already running keep theirs until they restart). It reports whether it
// switched.
func RefreshBootstrap(ctx context.Context, db *gorm.DB, hc *http.Client, source string, client *rdap.Client) (bool, error) {
	fresh, err := rdap.LoadBootstrap(ctx, hc, source)
	if err != nil {
		return false, err
	}
	if !fresh.Publication().After(client.Bootstrap().Publication()) {
		return false, nil
	}
	row := models.RDAPBootstrap{ID: 1, Data: fresh.Raw(), Publication: fresh.Publication(), FetchedAt: time.Now().UTC()}
	if err := db.WithContext(ctx).Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error; err != nil {
		return false, fmt.Errorf("store RDAP bootstrap: %w", err)
	}
	client.SetBootstrap(fresh)
	return true, nil
}
