package gateway

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// Handler returns the gateway's HTTP handler: the MCP routes (MCPHandler)
// and the admin routes (AdminHandler: /healthz, /readyz and the extra
// routes given, e.g. /metrics) on one listener.
func (s *Server) Handler(extra map[string]http.Handler) http.Handler {
	e := s.newEcho()
	s.mcpRoutes(e)
	s.adminRoutes(e, extra)
	return e
}

// MCPHandler serves only what MCP clients use: the MCP endpoint at the
// mount path, the 2024-11-05 transport's two endpoints and the protected
// resource metadata. With an admin listener, this is what the public one
// serves.
func (s *Server) MCPHandler() http.Handler {
	e := s.newEcho()
	s.mcpRoutes(e)
	return e
}

// AdminHandler serves /healthz, /readyz and the extra routes given, for a
// listener MCP clients cannot reach.
func (s *Server) AdminHandler(extra map[string]http.Handler) http.Handler {
	e := s.newEcho()
	s.adminRoutes(e, extra)
	return e
}

// newEcho is an echo instance answering its own errors in JSON. This
// file is the only place echo appears.
func (s *Server) newEcho() *echo.Echo {
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
	return e
}

func (s *Server) mcpRoutes(e *echo.Echo) {
	e.Any(s.cfg.MountPath, echo.WrapHandler(s))
	// The same endpoint, narrowed by its path (surface.go).
	base := strings.TrimSuffix(s.cfg.MountPath, "/")
	narrowed := func(named, readOnly bool) echo.HandlerFunc {
		return func(c echo.Context) error {
			var toolsets *string
			if named {
				ts := pathParam(c, "toolsets")
				toolsets = &ts
			}
			s.serveNarrowed(c.Response(), c.Request(), toolsets, readOnly)
			return nil
		}
	}
	e.Any(base+"/readonly", narrowed(false, true))
	e.Any(base+"/x/:toolsets", narrowed(true, false))
	e.Any(base+"/x/:toolsets/readonly", narrowed(true, true))
	if !s.cfg.DisableLegacySSE {
		e.Any(s.cfg.LegacySSEPath, echo.WrapHandler(http.HandlerFunc(s.serveLegacySSE)))
		e.Any(s.cfg.LegacyMessagesPath, echo.WrapHandler(http.HandlerFunc(s.serveLegacyMessage)))
	}
	if len(s.cfg.WebhookSecret) > 0 {
		e.Any(s.cfg.WebhookPath, echo.WrapHandler(s.watch.Webhook(s.cfg.WebhookSecret, s.resources.URIsForPath)))
	}
	if s.prm != nil {
		// RFC 9728: at the well-known path, and with the resource's path
		// appended, where clients of the 2025-06-18 revision look first.
		if !s.cfg.NoRootResourceMetadata {
			e.Any(ResourceMetadataPath, echo.WrapHandler(s.prm))
		}
		e.Any(ResourceMetadataPath+s.cfg.MountPath, echo.WrapHandler(s.prm))
	}
}

// Routes are the paths MCPHandler serves, for a listener that serves
// several gateways: exact paths, and prefixes ending in "/" under which
// it serves what it knows and answers 404 for the rest.
func (s *Server) Routes() []string {
	base := strings.TrimSuffix(s.cfg.MountPath, "/")
	out := []string{s.cfg.MountPath, base + "/readonly", base + "/x/"}
	if !s.cfg.DisableLegacySSE {
		out = append(out, s.cfg.LegacySSEPath, s.cfg.LegacyMessagesPath)
	}
	if len(s.cfg.WebhookSecret) > 0 {
		out = append(out, s.cfg.WebhookPath)
	}
	if s.prm != nil {
		if !s.cfg.NoRootResourceMetadata {
			out = append(out, ResourceMetadataPath)
		}
		out = append(out, ResourceMetadataPath+s.cfg.MountPath)
	}
	return out
}

// ResourceMetadataPath is where the protected resource metadata is served.
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// WebhookPath is where the backend posts resource change events (served
// only with Config.WebhookSecret).
const WebhookPath = "/webhooks/resources"

func (s *Server) adminRoutes(e *echo.Echo, extra map[string]http.Handler) {
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
}

// pathParam is a route parameter, percent-decoded (a client may encode
// the commas of /x/a,b).
func pathParam(c echo.Context, name string) string {
	v := c.Param(name)
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}
