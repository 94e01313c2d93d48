package main

// The token endpoints a Google client meets, as Google's OAuth2 server treats
// them: a service-account key's signed assertion (/token, the key file's
// token_uri) is verified against the public key registered for that account
// (RS256 signature, iss, aud = this endpoint, a scope, iat/exp within an hour)
// before a token is issued; gce.conf's token-url (/alt-token, upstream's
// AltTokenSource) answers {accessToken, expireTime}. Every token the fake
// issues is remembered, so a test can make Compute calls with any other
// bearer fail with 401 (config requireIssuedTokens).

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// computeScope is the narrowest scope that covers what the fake serves.
const computeScope = "https://www.googleapis.com/auth/compute"

type serviceAccountSeed struct {
	Email string `json:"email"`
	// PEM of the key's public half (SPKI "PUBLIC KEY" or PKCS#1 "RSA PUBLIC KEY").
	PublicKey string `json:"publicKey"`
}

func parsePublicKey(pemText string) (*rsa.PublicKey, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("publicKey is not PEM")
	}
	if block.Type == "RSA PUBLIC KEY" {
		return x509.ParsePKCS1PublicKey(block.Bytes)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	rk, ok := k.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("publicKey is not an RSA key")
	}
	return rk, nil
}

func (s *server) addServiceAccounts(body []byte) error {
	var seeds []serviceAccountSeed
	if err := json.Unmarshal(body, &seeds); err != nil {
		return err
	}
	keys := map[string]*rsa.PublicKey{}
	for _, sa := range seeds {
		k, err := parsePublicKey(sa.PublicKey)
		if err != nil || sa.Email == "" {
			return fmt.Errorf("service account %q: %v", sa.Email, err)
		}
		keys[sa.Email] = k
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for e, k := range keys {
		s.accounts[e] = k
	}
	return nil
}

type jwtClaims struct {
	Iss   string `json:"iss"`
	Scope string `json:"scope"`
	Aud   string `json:"aud"`
	Iat   int64  `json:"iat"`
	Exp   int64  `json:"exp"`
}

// verifyAssertion checks a jwt-bearer assertion as Google's token endpoint
// does; the error is the reason the grant is refused.
func (s *server) verifyAssertion(assertion string, now time.Time) (*jwtClaims, error) {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return nil, errors.New("the assertion is not a JWS compact serialization")
	}
	var header struct {
		Alg string `json:"alg"`
	}
	var claims jwtClaims
	if err := decodeSegment(parts[0], &header); err != nil {
		return nil, fmt.Errorf("header: %v", err)
	}
	if header.Alg != "RS256" {
		return nil, fmt.Errorf("alg %q, want RS256", header.Alg)
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return nil, fmt.Errorf("claims: %v", err)
	}
	s.mu.Lock()
	key := s.accounts[claims.Iss]
	s.mu.Unlock()
	if key == nil {
		return &claims, fmt.Errorf("no service account %q", claims.Iss)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return &claims, errors.New("the signature is not base64url")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], sig); err != nil {
		return &claims, errors.New("invalid JWT signature")
	}
	if want := s.endpoint + "/token"; claims.Aud != want {
		return &claims, fmt.Errorf("aud %q, want %q", claims.Aud, want)
	}
	if !strings.Contains(" "+claims.Scope+" ", " "+computeScope+" ") {
		return &claims, fmt.Errorf("scope %q does not include %s", claims.Scope, computeScope)
	}
	t := now.Unix()
	// Google allows a few minutes of clock skew and at most an hour of validity.
	if claims.Iat > t+300 || claims.Exp <= t || claims.Exp-claims.Iat > 3600 {
		return &claims, fmt.Errorf("invalid iat %d / exp %d at %d", claims.Iat, claims.Exp, t)
	}
	return &claims, nil
}

func decodeSegment(seg string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// issue makes and remembers a new token.
func (s *server) issue(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens++
	t := fmt.Sprintf("%s-%d", prefix, s.tokens)
	s.issued[t] = true
	return t
}

// bearerAccepted is false only when the test asked for issued tokens and this is not one.
func (s *server) bearerAccepted(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.requireIssued || s.issued[token]
}

func (s *server) token(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w}
	entry := logEntry{Method: r.Method, Path: r.URL.Path, API: "oauth2.token"}
	defer func() { entry.Status = rec.status; s.record(entry) }()
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if r.URL.Path == "/alt-token" {
		entry.API = "alt.token"
		if f := s.takeFault(r.Method, entry.API, ""); f != nil {
			writeAPIError(rec, &apiError{code: max(f.Status, 400), reason: f.Reason, message: f.Message})
			return
		}
		writeJSON(rec, 200, map[string]string{"accessToken": s.issue("alt-token"), "expireTime": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
		return
	}
	form, err := parseForm(body)
	if err != nil || form["grant_type"] != "urn:ietf:params:oauth:grant-type:jwt-bearer" || form["assertion"] == "" {
		writeJSON(rec, 400, map[string]string{"error": "invalid_grant", "error_description": "Invalid JWT assertion or grant type."})
		return
	}
	claims, err := s.verifyAssertion(form["assertion"], time.Now())
	if claims != nil {
		entry.Issuer = claims.Iss
	}
	if err != nil {
		entry.Refused = err.Error()
		writeJSON(rec, 400, map[string]string{"error": "invalid_grant", "error_description": err.Error()})
		return
	}
	writeJSON(rec, 200, map[string]any{"access_token": s.issue("sa-token"), "expires_in": 3599, "token_type": "Bearer"})
}
