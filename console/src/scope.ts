// Who a page is for. The console is the operator's (every tenant); the portal is one tenant's developer's, whose
// token the server scopes: the shared pages leave out what only an operator may open (tenants), and what a
// read-only portal token may not do (every change).
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'

export type Scope = 'operator' | 'tenant'

export const ScopeContext = createContext<Scope>('operator')

export const useScope = (): Scope => useContext(ScopeContext)

/** False for a read-only portal token: the pages show, and offer no change the server would refuse. */
export const WriteContext = createContext(true)

export const useCanWrite = (): boolean => useContext(WriteContext)
