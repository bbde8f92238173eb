/** The stored columns of a connection that say where it points and how its password is held (table `connections`, owned by this kind). */
export interface ConnectionRow {
  connection_id: string;
  vendor: string;
  account_url: string | null;
  warehouse: string | null;
  database_name: string | null;
  schema_name: string | null;
  username: string | null;
  password_env: string | null;
  secret_ref: string | null;
}
