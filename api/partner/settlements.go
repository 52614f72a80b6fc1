package partner

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/settlement"
)

// listSettlements answers GET /api/partner/v1/settlements: the partner's
// statements in its credential's environment, newest period first, with
// limit and cursor.
func (a *API) listSettlements(c *gin.Context) error {
	cred := credential(c)
	limit, err := httpjson.IntParam(c, "limit", settlement.DefaultStatements, 1, settlement.MaxStatements)
	if err != nil {
		return err
	}
	statements, next, err := a.Settlements.Statements(c.Request.Context(), settlement.StatementFilter{
		PartnerID: cred.PartnerID, Environment: cred.Environment, Limit: limit, Cursor: c.Query("cursor")})
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"settlements": httpjson.NonNil(statements), "next_cursor": httpjson.Nullable(next)})
	return nil
}
