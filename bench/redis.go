package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a redis-server this run owns: its own port and data
// directory, no persistence. Nothing else uses it, so its counters and
// memory figures are the gateway's alone.
type redisServer struct {
	addr   string
	cmd    *exec.Cmd
	client *redis.Client
}

func startRedis(dir string) (*redisServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	cmd := exec.Command("redis-server",
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--dir", dir, "--logfile", dir+"/redis.log")
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	r := &redisServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd}
	r.client = redis.NewClient(&redis.Options{Addr: r.addr, DialTimeout: time.Second})
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := r.client.Ping(ctx).Err()
		cancel()
		if err == nil {
			return r, nil
		}
		if time.Now().After(deadline) {
			r.stop()
			log, _ := os.ReadFile(dir + "/redis.log")
			return nil, fmt.Errorf("redis-server did not answer PING: %v\n%s", err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *redisServer) url() string { return "redis://" + r.addr }

func (r *redisServer) stop() {
	if r == nil {
		return
	}
	if r.client != nil {
		_ = r.client.Close()
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}

// commandCounts reads INFO commandstats: calls per command. The INFO
// commands this harness sends are left out.
func (r *redisServer) commandCounts() map[string]int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s, err := r.client.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil
	}
	out := map[string]int64{}
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		name = strings.TrimPrefix(name, "cmdstat_")
		if name == "info" {
			continue
		}
		for kv := range strings.SplitSeq(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				out[name] = n
			}
		}
	}
	return out
}

// commandDelta is what ran between two commandCounts readings.
func commandDelta(before, after map[string]int64) (total int64, byName map[string]int64) {
	byName = map[string]int64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			byName[k] = d
			total += d
		}
	}
	return total, byName
}

// usedMemory is INFO memory used_memory, in bytes.
func (r *redisServer) usedMemory() int64 { return r.infoField("memory", "used_memory") }

// infoField is one numeric field of an INFO section, 0 when unread.
func (r *redisServer) infoField(section, field string) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s, err := r.client.Info(ctx, section).Result()
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// keyMemory is the mean MEMORY USAGE (SAMPLES 0: exact) of up to n keys
// matching pattern, and how many were measured.
func (r *redisServer) keyMemory(pattern string, n int) (float64, int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var total int64
	count := 0
	iter := r.client.Scan(ctx, 0, pattern, 100).Iterator()
	for iter.Next(ctx) && count < n {
		m, err := r.client.MemoryUsage(ctx, iter.Val(), 0).Result()
		if err != nil {
			continue
		}
		total += m
		count++
	}
	if count == 0 {
		return 0, 0
	}
	return float64(total) / float64(count), count
}
