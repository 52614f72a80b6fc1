package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/canary"
	"github.com/domaind/domaind/models"
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
	steps, stepMS := canary.DefaultSteps, canary.DefaultStepMS
	if req.Steps != nil {
		steps = *req.Steps
	}
	if req.StepMS != nil {
		stepMS = *req.StepMS
	}
	created, err := s.svc.Canaries.Create(c.Request.Context(), steps, stepMS)
	if err != nil {
		return err
	}
	c.Header("Location", s.canaryURL(created.ID))
	c.JSON(http.StatusAccepted, s.canaryView(created, 0))
	return nil
}

// getCanary answers GET /api/ops/canaries/{id}: the canary as its steps
// were written.
func (s *Server) getCanary(c *gin.Context) error {
	got, done, err := s.svc.Canaries.Get(c.Request.Context(), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, s.canaryView(got, done))
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
