package demo

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"maps"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI returns the backend's OpenAPI 3.0.3 document (YAML). Its server URL
// is a placeholder; callers pass the real base URL explicitly.
func OpenAPI() []byte { return bytes.Clone(openAPI) }

// Server is the in-memory backend. It is safe for concurrent use.
type Server struct {
	now   func() time.Time
	files map[string][]byte // never written after New

	mu     sync.Mutex
	notes  map[int64]note
	nextID int64
}

type note struct {
	ID        int64     `json:"id"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	Tags      []string  `json:"tags"` // never nil, and replaced rather than mutated
	Status    string    `json:"status"`
	Author    string    `json:"author"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

type fileInfo struct {
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	Size        int    `json:"size"`
}

// New returns a Server seeded with the same three notes and two PNG files
// every time.
func New() *Server {
	s := &Server{
		now:    time.Now,
		files:  map[string][]byte{"logo.png": logoPNG(), "pixel.png": pixelPNG()},
		notes:  map[int64]note{},
		nextID: 1,
	}
	t := time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)
	for i, n := range []note{
		{Title: "Welcome to mcp-gateway", Body: "Every operation of this API is an MCP tool.", Tags: []string{"demo", "welcome"}, Status: "published", Author: "gateway-team"},
		{Title: "Shopping list", Body: "Milk, eggs, coffee beans.", Tags: []string{"personal"}, Status: "draft", Author: "alice"},
		{Title: "Quarterly report", Body: "Revenue up 4%; costs flat.", Tags: []string{"work", "finance"}, Status: "archived", Author: "bob"},
	} {
		n.ID = s.nextID
		n.CreatedAt = t.Add(time.Duration(i) * time.Hour)
		n.UpdatedAt = n.CreatedAt
		s.notes[n.ID] = n
		s.nextID++
	}
	return s
}

// handlerFunc is an HTTP handler whose *problem errors are rendered in one
// place, by ServeHTTP.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// Handler returns the API's routes. Requests outside the document get the
// ServeMux's own 404 and 405 answers.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for pattern, h := range map[string]handlerFunc{
		"GET /health":                s.getHealth,
		"GET /notes":                 s.listNotes,
		"POST /notes":                s.createNote,
		"GET /notes/{id}":            s.getNote,
		"PUT /notes/{id}":            s.replaceNote,
		"PATCH /notes/{id}":          s.updateNote,
		"DELETE /notes/{id}":         s.deleteNote,
		"GET /notes/{id}/text":       s.getNoteText,
		"GET /files":                 s.listFiles,
		"GET /files/{name}/download": s.downloadFile, // GET patterns also match HEAD (checkFile)
	} {
		mux.Handle(pattern, h)
	}
	return mux
}

// problem is an RFC 9457 problem document and the error that carries it.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
}

func (p *problem) Error() string { return p.Detail }

func newProblem(status int, format string, args ...any) error {
	return &problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) error {
	return newProblem(http.StatusBadRequest, format, args...)
}

func (h handlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	err := h(w, r)
	if err == nil {
		return
	}
	var p *problem
	if !errors.As(err, &p) {
		// Never sent to clients: only our own problems are.
		p = &problem{Type: "about:blank", Title: http.StatusText(http.StatusInternalServerError), Status: http.StatusInternalServerError}
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(p.Status)
		return
	}
	body, _ := json.Marshal(p) // a problem always marshals
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_, _ = w.Write(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("demo: encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return nil
}

func writeText(w http.ResponseWriter, text string) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, text)
	return nil
}

func (s *Server) getHealth(w http.ResponseWriter, _ *http.Request) error {
	return writeText(w, "ok")
}

var (
	statuses    = []string{"draft", "published", "archived"}
	tagPattern  = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)
	filePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
)

func (s *Server) listNotes(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	status := q.Get("status")
	if q.Has("status") && !slices.Contains(statuses, status) {
		return badRequest("status must be one of %s", strings.Join(statuses, ", "))
	}
	limit := 20
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > 100 {
			return badRequest("limit must be an integer from 1 to 100")
		}
		limit = n
	}
	tags := q["tag"]
	if err := checkTags(tags); err != nil {
		return err
	}

	s.mu.Lock()
	var matched []note
	for _, n := range s.notes {
		if (status == "" || n.Status == status) && containsAll(n.Tags, tags) {
			matched = append(matched, n)
		}
	}
	s.mu.Unlock()

	slices.SortFunc(matched, func(a, b note) int { return cmp.Compare(a.ID, b.ID) })
	page := append([]note{}, matched[:min(limit, len(matched))]...) // [] rather than null when empty
	return writeJSON(w, http.StatusOK, map[string]any{"items": page, "total": len(matched)})
}

func containsAll(have, want []string) bool {
	for _, t := range want {
		if !slices.Contains(have, t) {
			return false
		}
	}
	return true
}

func checkTags(tags []string) error {
	if len(tags) > 10 {
		return badRequest("at most 10 tags are allowed")
	}
	for _, t := range tags {
		if !tagPattern.MatchString(t) {
			return badRequest("tag %q must be 1 to 32 characters of a-z, 0-9 and -", t)
		}
	}
	return nil
}

func (s *Server) createNote(w http.ResponseWriter, r *http.Request) error {
	author := "anonymous"
	if vs := r.Header.Values("X-Author"); len(vs) > 0 {
		author = vs[0]
		if n := utf8.RuneCountInString(author); n < 1 || n > 64 {
			return badRequest("X-Author must be 1 to 64 characters")
		}
	}
	f, err := decodeNote(w, r)
	if err != nil {
		return err
	}
	if f.Title == nil {
		return badRequest("title is required")
	}
	now := s.now().UTC().Truncate(time.Second)
	n := note{Author: author, CreatedAt: now}
	f.replace(&n, now)

	s.mu.Lock()
	n.ID = s.nextID
	s.nextID++
	s.notes[n.ID] = n
	s.mu.Unlock()

	w.Header().Set("Location", "/notes/"+strconv.FormatInt(n.ID, 10))
	return writeJSON(w, http.StatusCreated, n)
}

func (s *Server) getNote(w http.ResponseWriter, r *http.Request) error {
	n, err := s.lookup(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, n)
}

func (s *Server) getNoteText(w http.ResponseWriter, r *http.Request) error {
	n, err := s.lookup(r)
	if err != nil {
		return err
	}
	return writeText(w, n.Title+"\n\n"+n.Body+"\n")
}

func (s *Server) replaceNote(w http.ResponseWriter, r *http.Request) error {
	id, err := noteID(r)
	if err != nil {
		return err
	}
	f, err := decodeNote(w, r)
	if err != nil {
		return err
	}
	if f.Title == nil {
		return badRequest("title is required")
	}
	return s.modify(w, id, func(n *note) { f.replace(n, s.now().UTC().Truncate(time.Second)) })
}

func (s *Server) updateNote(w http.ResponseWriter, r *http.Request) error {
	id, err := noteID(r)
	if err != nil {
		return err
	}
	f, err := decodeNote(w, r)
	if err != nil {
		return err
	}
	if f == (noteFields{}) {
		return badRequest("body must set at least one of title, body, tags, status")
	}
	return s.modify(w, id, func(n *note) { f.update(n, s.now().UTC().Truncate(time.Second)) })
}

func (s *Server) deleteNote(w http.ResponseWriter, r *http.Request) error {
	id, err := noteID(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	_, ok := s.notes[id]
	delete(s.notes, id)
	s.mu.Unlock()
	if !ok {
		return noteNotFound(id)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func noteID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, badRequest("id must be a positive integer")
	}
	return id, nil
}

func noteNotFound(id int64) error {
	return newProblem(http.StatusNotFound, "no note has id %d", id)
}

func (s *Server) lookup(r *http.Request) (note, error) {
	id, err := noteID(r)
	if err != nil {
		return note{}, err
	}
	s.mu.Lock()
	n, ok := s.notes[id]
	s.mu.Unlock()
	if !ok {
		return note{}, noteNotFound(id)
	}
	return n, nil
}

// modify applies change to note id under the lock and answers with the result.
func (s *Server) modify(w http.ResponseWriter, id int64, change func(*note)) error {
	s.mu.Lock()
	n, ok := s.notes[id]
	if ok {
		change(&n)
		s.notes[id] = n
	}
	s.mu.Unlock()
	if !ok {
		return noteNotFound(id)
	}
	return writeJSON(w, http.StatusOK, n)
}

// noteFields are the writable members of a Note request body; nil means absent.
type noteFields struct {
	Title  *string   `json:"title"`
	Body   *string   `json:"body"`
	Tags   *[]string `json:"tags"`
	Status *string   `json:"status"`
}

// replace sets every writable field of n, absent ones to their defaults.
func (f noteFields) replace(n *note, now time.Time) {
	n.Title, n.Body, n.Tags, n.Status = "", "", []string{}, "draft"
	f.update(n, now)
}

// update sets the fields present in f.
func (f noteFields) update(n *note, now time.Time) {
	if f.Title != nil {
		n.Title = *f.Title
	}
	if f.Body != nil {
		n.Body = *f.Body
	}
	if f.Tags != nil {
		n.Tags = *f.Tags
	}
	if f.Status != nil {
		n.Status = *f.Status
	}
	n.UpdatedAt = now
}

var noteReadOnly = []string{"id", "author", "createdAt", "updatedAt"}
var noteWritable = []string{"title", "body", "tags", "status"}

// decodeNote reads a Note or NotePatch body. Both schemas forbid unknown
// members, and a Note request must not carry its readOnly members.
func decodeNote(w http.ResponseWriter, r *http.Request) (noteFields, error) {
	var f noteFields
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return f, badRequest("Content-Type must be application/json")
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		return f, badRequest("body is unreadable or larger than 1 MiB")
	}
	// A first pass over the raw members catches what encoding/json would let
	// through: unknown or differently-cased names, and nulls.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return f, badRequest("body must be a JSON object")
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		switch {
		case slices.Contains(noteReadOnly, k):
			return f, badRequest("%s is read-only", k)
		case !slices.Contains(noteWritable, k):
			return f, badRequest("unknown property %q", k)
		case string(raw[k]) == "null":
			return f, badRequest("%s must not be null", k)
		}
	}
	if err := json.Unmarshal(data, &f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return f, badRequest("%s has the wrong type", te.Field)
		}
		return f, badRequest("body must be a JSON object")
	}
	if f.Title != nil {
		if n := utf8.RuneCountInString(*f.Title); n < 1 || n > 200 {
			return f, badRequest("title must be 1 to 200 characters")
		}
	}
	if f.Body != nil && utf8.RuneCountInString(*f.Body) > 10000 {
		return f, badRequest("body must be at most 10000 characters")
	}
	if f.Tags != nil {
		if err := checkTags(*f.Tags); err != nil {
			return f, err
		}
	}
	if f.Status != nil && !slices.Contains(statuses, *f.Status) {
		return f, badRequest("status must be one of %s", strings.Join(statuses, ", "))
	}
	return f, nil
}

func (s *Server) listFiles(w http.ResponseWriter, _ *http.Request) error {
	files := []fileInfo{}
	for _, name := range slices.Sorted(maps.Keys(s.files)) {
		files = append(files, fileInfo{Name: name, ContentType: "image/png", Size: len(s.files[name])})
	}
	return writeJSON(w, http.StatusOK, files)
}

// downloadFile serves both downloadFile (GET) and checkFile (HEAD).
func (s *Server) downloadFile(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if !filePattern.MatchString(name) {
		return badRequest("name must be 1 to 64 characters of a-z, 0-9, '.', '_' and '-'")
	}
	data, ok := s.files[name]
	if !ok {
		return newProblem(http.StatusNotFound, "no file is named %q", name)
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	if r.Method == http.MethodHead {
		return nil // net/http drops a HEAD body, but httptest recorders would keep it
	}
	_, _ = w.Write(data)
	return nil
}

// logoPNG draws a 32×32 blue disc on a transparent background.
func logoPNG() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
	for y := range 32 {
		for x := range 32 {
			if dx, dy := x-16, y-16; dx*dx+dy*dy <= 14*14 {
				img.SetNRGBA(x, y, color.NRGBA{R: 30, G: 100, B: uint8(150 + x*3), A: 255})
			}
		}
	}
	return encodePNG(img)
}

// pixelPNG is a single opaque white pixel.
func pixelPNG() []byte {
	img := image.NewGray(image.Rect(0, 0, 1, 1))
	img.Pix[0] = 0xff
	return encodePNG(img)
}

func encodePNG(img image.Image) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic("demo: encode PNG: " + err.Error()) // in-memory images always encode
	}
	return buf.Bytes()
}
