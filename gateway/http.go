package gateway

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// Handler returns the gateway's HTTP handler: the MCP endpoint at the mount
// path, the 2024-11-05 transport's two endpoints, /healthz and /readyz, and the extra routes given (e.g. /metrics).
// This is the only place echo appears.
func (s *Server) Handler(extra map[string]http.Handler) http.Handler {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		status := http.StatusInternalServerError
		msg := "Internal Server Error"
		var he *echo.HTTPError
		if errors.As(err, &he) {
			status = he.Code
			msg = http.StatusText(status)
		} else {
			s.log.Error("http handler failed", "err", err, "path", c.Request().URL.Path)
		}
		_ = c.JSON(status, map[string]string{"error": msg})
	}
	e.Any(s.cfg.MountPath, echo.WrapHandler(s))
	if !s.cfg.DisableLegacySSE {
		e.Any(s.cfg.LegacySSEPath, echo.WrapHandler(http.HandlerFunc(s.serveLegacySSE)))
		e.Any(s.cfg.LegacyMessagesPath, echo.WrapHandler(http.HandlerFunc(s.serveLegacyMessage)))
	}
	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/readyz", func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		if err := s.Ready(ctx); err != nil {
			return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": err.Error()})
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	})
	for path, h := range extra {
		e.Any(path, echo.WrapHandler(h))
	}
	return e
}
