package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 25: a push the registry confirmed is delivery. Orders whose push
// succeeded were left TRANSFER_IN_PROGRESS, where they could be refunded
// and their names sold again; they become TRANSFER_COMPLETED as of the
// push's confirmation, with a step saying why (no event: the partner was
// sent transfer.completed then).

const deliveredByPush = `order_steps.order_id = orders.public_id AND order_steps.event = 'transfer.completed'`

func migrateV25(tx *gorm.DB) error {
	now := time.Now().UTC()
	stuck := `status = 'TRANSFER_IN_PROGRESS' AND EXISTS (SELECT 1 FROM order_steps WHERE ` + deliveredByPush + `)`
	if err := tx.Exec(`INSERT INTO order_steps (order_id, at, actor, status, event, note)
		SELECT public_id, ?, 'registry', 'TRANSFER_COMPLETED', '',
			'delivered: the registry had confirmed the push (schema step 25; the settlement clock starts at the confirmation)'
		FROM orders WHERE `+stuck, now).Error; err != nil {
		return err
	}
	return tx.Exec(`UPDATE orders SET status = 'TRANSFER_COMPLETED', updated_at = ?,
		transfer_completed_at = (SELECT MIN(order_steps.at) FROM order_steps WHERE `+deliveredByPush+`)
		WHERE `+stuck, now).Error
}
