package tasks

import "github.com/hibiken/asynq"

// TypeTLDSync copies TLD prices and rules from the registry provider.
const TypeTLDSync = "tld:sync"

// NewTLDSyncTask makes the periodic TLD sync. It has no payload.
func NewTLDSyncTask() *asynq.Task { return asynq.NewTask(TypeTLDSync, nil) }
