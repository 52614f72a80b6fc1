package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/requestid"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

type canaryRequest struct {
	Steps  *int `json:"steps"`
	StepMS *int `json:"step_ms"`
}

type canaryResponse struct {
	ID          string     `json:"id"`
	Status      string     `json:"status"`
	Steps       int        `json:"steps"`
	StepsDone   int64      `json:"steps_done"`
	StepMS      int        `json:"step_ms"`
	Attempts    int        `json:"attempts"`
	RequestID   string     `json:"request_id"`
	StatusURL   string     `json:"status_url"`
	CreatedAt   time.Time  `json:"created_at"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	// TotalMS is the time from the request to the last step, once done.
	TotalMS *int64 `json:"total_ms"`
}

// createCanary sends a canary through the pipeline: a row and its task,
// written together through the outbox. Ops staff poll its status URL.
func (s *Server) createCanary(c *gin.Context) error {
	var req canaryRequest
	if err := httpjson.DecodeJSON(c, &req, true); err != nil {
		return err
	}
	steps, stepMS := 3, 100
	if req.Steps != nil {
		steps = *req.Steps
	}
	if req.StepMS != nil {
		stepMS = *req.StepMS
	}
	if steps < 1 || steps > 1000 {
		return fault.New(fault.Validation, "steps must be between 1 and 1000")
	}
	if stepMS < 0 || stepMS > 10_000 {
		return fault.New(fault.Validation, "step_ms must be between 0 and 10000")
	}
	ctx := c.Request.Context()
	canary := models.Canary{ID: models.NewID(), RequestID: requestid.From(ctx), Steps: steps, StepMillis: stepMS}
	err := s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		if err := tx.Create(&canary).Error; err != nil {
			return err
		}
		tx.Add(tasks.CanaryRunPayload{CanaryID: canary.ID})
		return nil
	})
	if err != nil {
		return err
	}
	c.Header("Location", s.canaryURL(canary.ID))
	c.JSON(http.StatusAccepted, s.canaryView(canary, 0))
	return nil
}

func (s *Server) getCanary(c *gin.Context) error {
	db := s.db.WithContext(c.Request.Context())
	var canary models.Canary
	if err := models.FoundOr(db.Take(&canary, "id = ?", c.Param("id")).Error, "canary", "no canary with this id"); err != nil {
		return err
	}
	var done int64
	if err := db.Model(&models.CanaryStep{}).Where("canary_id = ?", canary.ID).Count(&done).Error; err != nil {
		return err
	}
	c.JSON(http.StatusOK, s.canaryView(canary, done))
	return nil
}

func (s *Server) canaryURL(id string) string {
	return s.cfg.BaseURL.JoinPath("api/ops/canaries", id).String()
}

func (s *Server) canaryView(m models.Canary, done int64) canaryResponse {
	r := canaryResponse{
		ID: m.ID, Status: "queued", Steps: m.Steps, StepsDone: done, StepMS: m.StepMillis,
		Attempts: m.Attempts, RequestID: m.RequestID, StatusURL: s.canaryURL(m.ID),
		CreatedAt: m.CreatedAt, StartedAt: m.StartedAt, CompletedAt: m.CompletedAt,
	}
	switch {
	case m.CompletedAt != nil:
		r.Status = "done"
		total := m.CompletedAt.Sub(m.CreatedAt).Milliseconds()
		r.TotalMS = &total
	case m.StartedAt != nil:
		r.Status = "running"
	}
	return r
}
